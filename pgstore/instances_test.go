package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/pgtest"
	"github.com/fairsched/fairsched/pgstore"
)

// TestHeartbeatsAndLostInstances: instances register by beating; one
// silent past the deadline is declared lost by the leader, once; a
// deposed leader declares nobody lost.
func TestHeartbeatsAndLostInstances(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	st := open(t, url)
	defer st.Close()
	ctx := context.Background()
	for _, id := range []string{"i1", "i2", "i3"} {
		if _, err := st.Heartbeat(ctx, "d", pgstore.Instance{ID: id, Slots: 4, Types: []string{"mail", "index"}}); err != nil {
			t.Fatal(err)
		}
	}
	// i2 went silent a minute ago: the test moves its last beat back.
	pgtest.Exec(t, url, `UPDATE fairsched_instances SET heartbeat_at = now() - interval '1 minute' WHERE instance = 'i2'`)
	epoch, ok, err := st.Acquire(ctx, "d", "i1", 10*time.Second)
	if err != nil || !ok {
		t.Fatalf("acquire: %v %v", ok, err)
	}
	if _, err := st.Lost(ctx, "d", epoch+1, 30*time.Second); !errors.Is(err, pgstore.ErrFenced) {
		t.Errorf("Lost under a wrong epoch: %v; want ErrFenced", err)
	}
	var got []string
	for range 2 {
		lost, err := st.Lost(ctx, "d", epoch, 30*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprint(lost))
	}
	if diff := cmp.Diff([]string{"[i2]", "[]"}, got); diff != "" {
		t.Errorf("lost (-want +got):\n%s", diff)
	}
	ins, err := st.Instances(ctx, "d")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, in := range ins {
		ids = append(ids, in.ID)
		if in.Slots != 4 || !slices.Equal(in.Types, []string{"mail", "index"}) || in.Silent > 30*time.Second {
			t.Errorf("instance %+v", in)
		}
	}
	if diff := cmp.Diff([]string{"i1", "i3"}, ids); diff != "" {
		t.Errorf("instances (-want +got):\n%s", diff)
	}
}

// TestLostUntilRevoked: an instance declared lost whose grants were not
// taken back — its Revoke failed, or its leader stopped in between — is
// returned by every later Lost until they are, so that its jobs never stay
// granted to a process that is gone; an instance's grants that still
// beats are not. (A leader that lost one Revoke to a timeout left the
// jobs granted for ever.)
func TestLostUntilRevoked(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	st := open(t, url)
	defer st.Close()
	ctx := context.Background()
	for _, id := range []string{"a", "b"} {
		if err := st.Insert(ctx, &fairsched.JobRecord{Type: "t", ID: id, EnqueuedAt: time.Unix(0, 0).UTC()}); err != nil {
			t.Fatal(err)
		}
	}
	epoch := lead(t, st)
	for _, id := range []string{"gone#1", "alive#2"} {
		if _, err := st.Heartbeat(ctx, "d", pgstore.Instance{ID: id, Slots: 4}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.GrantJobs(ctx, "d", epoch, []pgstore.Grant{{Seq: 1, Instance: "gone#1", Attempt: 1}, {Seq: 2, Instance: "alive#2", Attempt: 1}}); err != nil {
		t.Fatal(err)
	}
	pgtest.Exec(t, url, `UPDATE fairsched_instances SET heartbeat_at = now() - interval '1 minute' WHERE instance = 'gone#1'`)
	var got []string
	step := func() {
		lost, err := st.Lost(ctx, "d", epoch, 30*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprint(lost))
	}
	step() // declared lost: its row goes
	step() // its Revoke never came: still holding a grant
	if _, err := st.Revoke(ctx, "d", epoch, "gone#1"); err != nil {
		t.Fatal(err)
	}
	step()
	if diff := cmp.Diff([]string{"[gone#1]", "[gone#1]", "[]"}, got); diff != "" {
		t.Errorf("lost (-want +got):\n%s", diff)
	}
}
