package boltstore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	bolt "go.etcd.io/bbolt"

	"github.com/fairsched/fairsched"
)

func sampleRecord() fairsched.JobRecord {
	return fairsched.JobRecord{
		Seq: 42, Type: "mail", ID: "welcome/7", Payload: []byte(`{"to":"a@example.com"}`), Key: "tenant-a", Group: "mailers",
		Tokens: 3 * time.Second, TTL: time.Hour, Retry: fairsched.RetryPolicy{MaxAttempts: 3, MinBackoff: time.Second, MaxBackoff: time.Minute},
		RetrySet: true, Floor: 4, Floored: true, EnqueuedAt: time.Date(2026, 11, 25, 6, 0, 0, 0, time.UTC),
		RunAt: time.Date(2026, 11, 25, 7, 0, 0, 0, time.UTC), Attempt: 2, State: 1, LastError: "smtp: 451",
		FinishedAt: time.Date(2026, 11, 25, 6, 30, 0, 0, time.UTC),
	}
}

// TestRecordRoundTrip: a record decodes to itself; records of another
// version, with unknown fields, trailing data or values no scheduler
// writes are errors.
func TestRecordRoundTrip(t *testing.T) {
	rec := sampleRecord()
	data, err := encodeRecord(rec)
	if err != nil {
		t.Fatal(err)
	}
	back, err := decodeRecord(data)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(rec, back); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	bad := map[string][]byte{
		"empty":         nil,
		"version 2":     append([]byte{2}, data[1:]...),
		"unknown field": append([]byte{1}, []byte(`{"seq":1,"type":"t","id":"x","state":0,"enqueued_at":"2026-01-01T00:00:00Z","bogus":1}`)...),
		"trailing":      append(bytes.Clone(data), []byte(`{}`)...),
		"no id":         append([]byte{1}, []byte(`{"seq":1,"type":"t","id":"","state":0,"enqueued_at":"2026-01-01T00:00:00Z"}`)...),
		"seq 0":         append([]byte{1}, []byte(`{"seq":0,"type":"t","id":"x","state":0,"enqueued_at":"2026-01-01T00:00:00Z"}`)...),
		"state 9":       append([]byte{1}, []byte(`{"seq":1,"type":"t","id":"x","state":9,"enqueued_at":"2026-01-01T00:00:00Z"}`)...),
		"bad retry":     append([]byte{1}, []byte(`{"seq":1,"type":"t","id":"x","state":0,"retry_set":true,"retry":{"MaxAttempts":-1},"enqueued_at":"2026-01-01T00:00:00Z"}`)...),
	}
	for name, b := range bad {
		if _, err := decodeRecord(b); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
}

// FuzzDecodeRecord: no input makes decodeRecord panic; what it accepts is
// valid and encodes back to a record that decodes to the same.
func FuzzDecodeRecord(f *testing.F) {
	data, _ := encodeRecord(sampleRecord())
	f.Add(data)
	f.Add([]byte{1, '{', '}'})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		rec, err := decodeRecord(b)
		if err != nil {
			return
		}
		if !rec.Valid() {
			t.Fatalf("accepted an invalid record: %+v", rec)
		}
		again, err := encodeRecord(rec)
		if err != nil {
			t.Fatal(err)
		}
		back, err := decodeRecord(again)
		if err != nil || !cmp.Equal(rec, back, cmpopts.EquateEmpty()) { // an empty payload is no payload
			t.Fatalf("re-encoded record does not decode the same: %v\n%s", err, cmp.Diff(rec, back))
		}
	})
}

// TestJobsApplyAndLoad: puts and deletes commit together; LoadJobs reads
// the records in sequence order.
func TestJobsApplyAndLoad(t *testing.T) {
	st, err := Open(filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	recs := []fairsched.JobRecord{sampleRecord(), sampleRecord(), sampleRecord()}
	for i := range recs {
		recs[i].Seq = uint64(300 - 100*i) // 300, 200, 100: keys sort by number
		recs[i].ID = string(rune('a' + i))
	}
	if err := st.ApplyJobs([]fairsched.JobOp{{Put: &recs[0]}, {Put: &recs[1]}, {Put: &recs[2]}}); err != nil {
		t.Fatal(err)
	}
	if err := st.ApplyJobs([]fairsched.JobOp{{Delete: 200}}); err != nil {
		t.Fatal(err)
	}
	var got []uint64
	if err := st.LoadJobs(func(r fairsched.JobRecord) error { got = append(got, r.Seq); return nil }); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]uint64{100, 300}, got); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
}

// TestNewerLayoutAndForeignFilesAreRefused: a file written by a newer
// layout, a bbolt file of another program and a file with a record that
// does not decode are refused with ErrStore and left byte for byte as
// they were.
func TestNewerLayoutAndForeignFilesAreRefused(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, fn func(tx *bolt.Tx) error) string {
		path := filepath.Join(dir, name)
		db, err := bolt.Open(path, 0o600, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Update(fn); err != nil {
			t.Fatal(err)
		}
		db.Close()
		return path
	}
	newer := write("newer.db", func(tx *bolt.Tx) error {
		b, _ := tx.CreateBucket(bucket)
		return b.Put(layoutKey, []byte("3"))
	})
	foreign := write("foreign.db", func(tx *bolt.Tx) error {
		_, err := tx.CreateBucket([]byte("users"))
		return err
	})
	garbled := write("garbled.db", func(tx *bolt.Tx) error {
		b, _ := tx.CreateBucket(jobsBucket)
		var k [8]byte
		binary.BigEndian.PutUint64(k[:], 1)
		return b.Put(k[:], []byte{1, '{'})
	})
	for name, c := range map[string]struct {
		path string
		want string
	}{
		"newer layout": {newer, "newer than this version"},
		"foreign":      {foreign, "not a fairsched store"},
	} {
		before, _ := os.ReadFile(c.path)
		_, err := Open(c.path)
		if !errors.Is(err, fairsched.ErrStore) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want ErrStore saying %q", name, err, c.want)
		}
		if after, _ := os.ReadFile(c.path); !bytes.Equal(before, after) {
			t.Errorf("%s: the file changed", name)
		}
	}
	before, _ := os.ReadFile(garbled)
	st, err := Open(garbled)
	if err != nil {
		t.Fatal(err)
	}
	_, err = fairsched.New(fairsched.WithStore(st))
	if !errors.Is(err, fairsched.ErrStore) {
		t.Errorf("New over a garbled record: %v; want ErrStore", err)
	}
	st.Close()
	if after, _ := os.ReadFile(garbled); !bytes.Equal(before, after) {
		t.Errorf("garbled: the file changed")
	}
}

// TestApplyJobsRefusesNamesItWouldChange: a record whose id, key, group or
// type breaks the rule for caller strings — which JSON would rewrite, two
// ids "\xff" and "\xfe" becoming one "\uFFFD" — is refused with
// ErrRecordRefused and nothing of the batch is written; the store is left
// as it was and keeps serving.
func TestApplyJobsRefusesNamesItWouldChange(t *testing.T) {
	st, err := Open(filepath.Join(t.TempDir(), "jobs.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	good := sampleRecord()
	good.Seq = 1
	for name, mutate := range map[string]func(*fairsched.JobRecord){
		"id \\xff":       func(r *fairsched.JobRecord) { r.ID = "\xff" },
		"id \\xfe":       func(r *fairsched.JobRecord) { r.ID = "\xfe" },
		"key":            func(r *fairsched.JobRecord) { r.Key = "key\xff" },
		"group NUL":      func(r *fairsched.JobRecord) { r.Group = "g\x00" },
		"type":           func(r *fairsched.JobRecord) { r.Type = "t\xc3" },
		"long id":        func(r *fairsched.JobRecord) { r.ID = strings.Repeat("i", 8000) },
		"owner not UTF8": func(r *fairsched.JobRecord) { r.Owner = "\xed\xa0\x80" },
	} {
		bad := sampleRecord()
		bad.Seq = 2
		mutate(&bad)
		err := st.ApplyJobs([]fairsched.JobOp{{Put: &good}, {Put: &bad}})
		if !errors.Is(err, fairsched.ErrRecordRefused) || !errors.Is(err, fairsched.ErrStore) {
			t.Errorf("%s: ApplyJobs = %v; want ErrRecordRefused (and ErrStore)", name, err)
		}
	}
	var got []fairsched.JobRecord
	if err := st.LoadJobs(func(r fairsched.JobRecord) error { got = append(got, r); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 0 {
		t.Fatalf("a refused batch wrote %d records", len(got))
	}
	if err := st.ApplyJobs([]fairsched.JobOp{{Put: &good}}); err != nil {
		t.Fatalf("a valid record after the refusals: %v", err)
	}
}
