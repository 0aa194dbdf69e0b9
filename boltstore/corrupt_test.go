package boltstore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/boltstore"
)

// validStore writes a store file holding some state and returns its bytes.
func validStore(t testing.TB) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "valid.db")
	st, err := boltstore.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	ests := make([]fairsched.CostEstimate, 200)
	for i := range ests {
		ests[i] = fairsched.CostEstimate{Type: work, ID: fmt.Sprint("repo-", i), Cost: time.Duration(i+1) * time.Second}
	}
	if err := st.Save(fairsched.StoreState{Estimates: ests, LastRuns: map[string]time.Time{"work/tick": time.Unix(1e9, 0)}}); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// useCorrupt opens a store file holding data, and if that succeeds runs a
// scheduler on it through a save: whatever the bytes, it must end in an
// error wrapping ErrStore or in success, never in a panic, and a refused
// file is left as it was.
func useCorrupt(t testing.TB, data []byte) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "corrupt.db")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := boltstore.Open(path)
	if err != nil {
		if !errors.Is(err, fairsched.ErrStore) {
			t.Errorf("Open = %v; want an error wrapping ErrStore", err)
		}
		if after, _ := os.ReadFile(path); !bytes.Equal(after, data) {
			t.Error("a refused Open changed the file")
		}
		return
	}
	defer st.Close()
	s, err := fairsched.New(fairsched.WithClock(clock.NewMock()), fairsched.WithStore(st))
	if err != nil {
		if !errors.Is(err, fairsched.ErrStore) {
			t.Errorf("New = %v; want nil or an error wrapping ErrStore", err)
		}
		return
	}
	if err := s.RegisterType(work, workCfg); err != nil {
		t.Fatal(err)
	}
	if err := s.RunSync(context.Background(), work, "repo-1", "", func(context.Context) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(context.Background()); err != nil { // the final save
		t.Fatal(err)
	}
	if err := st.Save(fairsched.StoreState{}); err != nil && !errors.Is(err, fairsched.ErrStore) {
		t.Errorf("Save = %v; want nil or ErrStore", err)
	}
}

// TestCorruptFilesNeverPanic: a valid store file truncated, with pages
// zeroed, or with bytes flipped all through it — 6 of 197 such variants
// passed Open and crashed the process on the first save, 16 made Open or
// Load panic — is refused with ErrStore or used, never a panic.
func TestCorruptFilesNeverPanic(t *testing.T) {
	valid := validStore(t)
	const page = 4096
	variants := map[string][]byte{
		"truncated-half":    valid[:len(valid)/2],
		"truncated-1-page":  valid[:page],
		"truncated-2-pages": valid[:2*page], // the metas count pages the file no longer has
		"truncated-odd":     valid[:len(valid)-123],
	}
	for p := 0; p*page < len(valid); p++ {
		z := bytes.Clone(valid)
		clear(z[p*page : min((p+1)*page, len(z))])
		variants[fmt.Sprintf("page-%d-zeroed", p)] = z
	}
	// A flipped byte every 97 in make check; every 389 under -short (make
	// test), where FuzzCorruptStore's corpus covers the rest.
	stride := 97
	if testing.Short() {
		stride = 389
	}
	for off := 0; off < len(valid); off += stride {
		f := bytes.Clone(valid)
		f[off] ^= 0xff
		variants[fmt.Sprintf("byte-%d-flipped", off)] = f
	}
	for name, data := range variants {
		t.Run(name, func(t *testing.T) { useCorrupt(t, data) })
	}
}

// FuzzCorruptStore flips, zeroes or truncates a valid store file where the
// fuzzer says: Open, Load and Save return errors or succeed, never panic.
func FuzzCorruptStore(f *testing.F) {
	valid := validStore(f)
	f.Add(uint32(0), byte(0xff), uint32(0))         // the first meta page
	f.Add(uint32(4096), byte(0), uint32(0))         // the second meta page
	f.Add(uint32(2*4096+16), byte(0x01), uint32(0)) // the freelist
	f.Add(uint32(0), byte(0), uint32(len(valid)/2)) // truncated to half
	f.Fuzz(func(t *testing.T, off uint32, xor byte, cut uint32) {
		data := bytes.Clone(valid)
		if cut > 0 {
			data = data[:int(cut)%len(data)]
		}
		if len(data) > 0 {
			data[int(off)%len(data)] ^= xor
		}
		useCorrupt(t, data)
	})
}
