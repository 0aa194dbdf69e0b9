package pgstore_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/cluster"
	"github.com/fairsched/fairsched/pgstore"
)

// TestRefusedRecordsAreSaid: a write of the cluster that PostgreSQL
// refuses for the data it carries — a conflict key too long for its index,
// an end's error text with a NUL, a notification's payload too long, a
// reply or a command's arguments jsonb cannot hold, a type's name with a
// NUL — fails with an error matching ErrRecordRefused (and ErrStore),
// having written nothing of its batch; a fenced write and a double
// admission are not refusals of a record.
func TestRefusedRecordsAreSaid(t *testing.T) {
	t.Parallel()
	st, epoch := leaderOver(t, 4)
	defer st.Close()
	ctx := context.Background()
	var log []string
	say := func(what string, err error) {
		switch {
		case err == nil:
			log = append(log, what+": ok")
		case errors.Is(err, fairsched.ErrRecordRefused) && errors.Is(err, fairsched.ErrStore):
			log = append(log, what+": refused")
		case errors.Is(err, pgstore.ErrFenced):
			log = append(log, what+": fenced")
		case errors.Is(err, pgstore.ErrDoubleAdmission):
			log = append(log, what+": double admission")
		default:
			log = append(log, what+": "+err.Error())
		}
	}
	long := incompressible(8000)
	_, err := st.GrantJobs(ctx, "d", epoch, []pgstore.Grant{{Seq: 1, Instance: "i1", Attempt: 1},
		{Seq: 2, Instance: "i1", Attempt: 1, ConflictKey: "repo/" + long}, {Seq: 3, Instance: "i1", Attempt: 1}})
	say("grants with a key of 8000 bytes", err)
	_, err = st.GrantJobs(ctx, "d", epoch+1, []pgstore.Grant{{Seq: 1, Instance: "i1", Attempt: 1}})
	say("grants of a deposed leader", err)
	_, err = st.GrantJobs(ctx, "d", epoch, []pgstore.Grant{{Seq: 1, Instance: "i1", Attempt: 1, ConflictKey: "repo/x"},
		{Seq: 2, Instance: "i1", Attempt: 1, ConflictKey: "repo/x"}})
	say("grants on one exclusive key", err)
	_, err = st.GrantJobs(ctx, "d", epoch, []pgstore.Grant{{Seq: 1, Instance: "i1", Attempt: 1}, {Seq: 3, Instance: "i1", Attempt: 1}})
	say("good grants", err)
	_, err = st.ReportEnds(ctx, []pgstore.End{{Seq: 1, Instance: "i1", Attempt: 1, Kind: cluster.EndError, Error: "fine"},
		{Seq: 3, Instance: "i1", Attempt: 1, Kind: cluster.EndError, Error: "bad\x00byte"}})
	say("ends, one with a NUL", err)
	_, err = st.ReportEnds(ctx, []pgstore.End{{Seq: 3, Instance: "i1", Attempt: 1, Kind: cluster.EndError, Error: "bad\xffbyte"}})
	say("an end with invalid UTF-8", err)
	say("a payload of 9000 bytes", st.Publish(ctx, []byte(strings.Repeat("e", 9000))))
	_, err = st.Command(ctx, "d", cluster.Command{Kind: "key_weight", Args: []byte(`{"key":"a\u0000b"}`)})
	say("a command with a NUL", err)
	id, err := st.Command(ctx, "d", cluster.Command{Kind: "key_weight", Args: []byte(`{"key":"a"}`)})
	say("a command", err)
	say("an answer with a NUL", st.Answer(ctx, "d", epoch, id, []byte(`{"err":"a\u0000b"}`), "", nil))
	say("a setting of 8000 bytes", st.Answer(ctx, "d", epoch, id, []byte(`{}`), "", map[string][]byte{"key_weight/" + long: []byte("2")}))
	say("types, one with a NUL", st.DefineTypes(ctx, "d", map[string][]byte{"type/ok": []byte(`{}`), "type/a\x00b": []byte(`{}`)}))
	want := []string{
		"grants with a key of 8000 bytes: refused",
		"grants of a deposed leader: fenced",
		"grants on one exclusive key: double admission",
		"good grants: ok",
		"ends, one with a NUL: refused",
		"an end with invalid UTF-8: refused",
		"a payload of 9000 bytes: refused",
		"a command with a NUL: refused",
		"a command: ok",
		"an answer with a NUL: refused",
		"a setting of 8000 bytes: refused",
		"types, one with a NUL: refused",
	}
	if diff := cmp.Diff(want, log); diff != "" {
		t.Errorf("writes (-want +got):\n%s", diff)
	}
	// A refused batch wrote nothing: both grants still run, unended; no
	// type was written.
	rows, err := st.Rows(ctx, []uint64{1, 3})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if !r.Running || r.Ended {
			t.Errorf("job %d after a refused report: %+v", r.Seq, r)
		}
	}
	settings, err := st.Settings(ctx, "d")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := settings["type/ok"]; ok {
		t.Error("a refused batch of types wrote one")
	}
}

// incompressible returns n letters that no compression shortens much:
// PostgreSQL compresses an index's long keys before it weighs them.
func incompressible(n int) string {
	r := rand.New(rand.NewPCG(1, 2))
	var b strings.Builder
	for range n {
		b.WriteByte(byte('a' + r.IntN(26)))
	}
	return b.String()
}
