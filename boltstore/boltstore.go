// Package boltstore keeps a fairsched scheduler's state and its durable
// jobs (fairsched.JobStore) in a file, on bbolt (go.etcd.io/bbolt): an
// embedded, pure-Go key/value store with ACID transactions and a single
// file, well kept (the storage engine of etcd), needing no server and no
// cgo. It lives in its own package so that programs that do not persist do
// not build it.
//
// The state is one JSON document in one bucket, replaced in one transaction
// per save: a crash leaves the previous or the new state, never half of one.
// Durable jobs are one record each, keyed by sequence number; a commit
// (ApplyJobs) writes only the records that changed and syncs the file
// before it returns. Layout is this layout's version, kept in the file: a
// file of a newer one is refused, never misread.
//
// A damaged file never takes the process down: Open runs bbolt's
// consistency check on an existing file, read-only, before it opens it for
// writing, and every panic of bbolt on a page it cannot read becomes an
// error wrapping fairsched.ErrStore (the package's fuzz test flips, zeroes
// and truncates files to hold it to that).
package boltstore

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/policy"
)

// The layout of the file. Bucket "fairsched" holds the state, one JSON
// document under "state", and the layout's version under "layout";
// bucket "jobs" holds one record per durable job under its sequence
// number, 8 bytes big-endian, so that a cursor reads them in order and
// each commit writes only the records that changed. A record is a version
// byte (1) and the record as JSON (core.JobRecord's fields). A file whose
// layout is newer than this package's is refused, never misread; a bbolt
// file with buckets of its own (another program's) is refused too, and
// left as it was.
var (
	bucket     = []byte("fairsched")
	jobsBucket = []byte("jobs")
	key        = []byte("state")
	layoutKey  = []byte("layout")
)

// Layout is the version of the file layout this package writes; it reads
// every earlier one (1: the state alone, before durable jobs).
const Layout = 2

// recordVersion is the first byte of every encoded job record.
const recordVersion = 1

// Store is a fairsched.JobStore in a bbolt file. Close it after the
// scheduler.
type Store struct {
	db     *bolt.DB
	closed atomic.Bool
}

var _ fairsched.JobStore = (*Store)(nil)

// Open opens (or creates) the store at path. A file that is not a bbolt
// database, one that fails bbolt's consistency check (a corrupted or
// truncated file), or one another process holds (after a second waiting
// for its lock), is an error wrapping
// fairsched.ErrStore, and the file is left as it was: an existing file is
// first opened read-only and checked page by page, and only a sound one is
// opened for writing. No file makes Open panic.
func Open(path string) (_ *Store, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("%w: boltstore: open %s: the file is corrupt (%v)", fairsched.ErrStore, path, v)
		}
	}()
	if fi, statErr := os.Stat(path); statErr == nil && fi.Size() > 0 {
		if err := check(path); err != nil {
			return nil, err
		}
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		return nil, fmt.Errorf("%w: boltstore: open %s: %w", fairsched.ErrStore, path, err)
	}
	return &Store{db: db}, nil
}

// check opens the file at path read-only and runs bbolt's consistency
// check over every page — after making sure that no meta page claims more
// pages than the file holds: bbolt maps the file and would touch them, and
// a page past the end of a mapped file is a SIGBUS, which no recover
// catches.
func check(path string) error {
	if err := checkSize(path); err != nil {
		return err
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second, ReadOnly: true})
	if err != nil {
		return fmt.Errorf("%w: boltstore: open %s: %w", fairsched.ErrStore, path, err)
	}
	defer db.Close()
	return db.View(func(tx *bolt.Tx) error {
		var errs []error
		for e := range tx.Check() {
			errs = append(errs, e)
		}
		if len(errs) > 0 {
			return fmt.Errorf("%w: boltstore: %s fails the consistency check: %w", fairsched.ErrStore, path, errors.Join(errs...))
		}
		if err := tx.ForEach(func(name []byte, _ *bolt.Bucket) error {
			if string(name) != string(bucket) && string(name) != string(jobsBucket) {
				return fmt.Errorf("%w: boltstore: %s is not a fairsched store (it has a bucket %q)", fairsched.ErrStore, path, name)
			}
			return nil
		}); err != nil {
			return err
		}
		if b := tx.Bucket(bucket); b != nil {
			if v := b.Get(layoutKey); v != nil {
				n, err := strconv.Atoi(string(v))
				if err != nil || n < 1 {
					return fmt.Errorf("%w: boltstore: %s has an unreadable layout %q", fairsched.ErrStore, path, v)
				}
				if n > Layout {
					return fmt.Errorf("%w: boltstore: %s was written with layout %d, newer than this version's %d: upgrade fairsched to read it", fairsched.ErrStore, path, n, Layout)
				}
			}
		}
		return nil
	})
}

// guard turns a panic of bbolt on a page it cannot read into an error.
func guard(op string, err *error) {
	if v := recover(); v != nil {
		*err = fmt.Errorf("%w: boltstore: %s: the file is corrupt (%v)", fairsched.ErrStore, op, v)
	}
}

// Load returns the saved state; a store never saved to holds none. A
// document that does not decode is an error.
func (s *Store) Load() (st fairsched.StoreState, err error) {
	defer guard("load", &err)
	err = s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucket)
		if b == nil {
			return nil
		}
		data := b.Get(key)
		if data == nil {
			return nil
		}
		if err := json.Unmarshal(data, &st); err != nil {
			return fmt.Errorf("boltstore: the saved state does not decode: %w", err)
		}
		return nil
	})
	return st, err
}

// Save replaces the saved state, in one transaction.
func (s *Store) Save(st fairsched.StoreState) (err error) {
	defer guard("save", &err)
	data, err := json.Marshal(st)
	if err != nil {
		return fmt.Errorf("boltstore: %w", err)
	}
	return s.db.Update(func(tx *bolt.Tx) error {
		b, err := stateBucket(tx)
		if err != nil {
			return err
		}
		return b.Put(key, data)
	})
}

// stateBucket returns the state bucket, created with the layout's version
// if the file has none.
func stateBucket(tx *bolt.Tx) (*bolt.Bucket, error) {
	b, err := tx.CreateBucketIfNotExists(bucket)
	if err != nil {
		return nil, err
	}
	if string(b.Get(layoutKey)) != strconv.Itoa(Layout) {
		if err := b.Put(layoutKey, []byte(strconv.Itoa(Layout))); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// LoadJobs calls fn with every job record, in sequence order. A record
// that does not decode, or whose key is not its sequence, is an error.
func (s *Store) LoadJobs(fn func(fairsched.JobRecord) error) (err error) {
	defer guard("load jobs", &err)
	return s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(jobsBucket)
		if b == nil {
			return nil
		}
		c := b.Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			rec, err := decodeRecord(v)
			if err != nil {
				return fmt.Errorf("boltstore: job record %x: %w", k, err)
			}
			if len(k) != 8 || binary.BigEndian.Uint64(k) != rec.Seq {
				return fmt.Errorf("boltstore: job record %x holds sequence %d", k, rec.Seq)
			}
			if err := fn(rec); err != nil {
				return err
			}
		}
		return nil
	})
}

// ApplyJobs commits ops in one transaction: bbolt syncs the file before
// the commit returns, so a nil error means they are on disk. A record no
// scheduler writes — a string that breaks the rule for caller strings
// among them, which JSON would silently change — is refused with an error
// wrapping fairsched.ErrRecordRefused, and nothing of ops is written.
func (s *Store) ApplyJobs(ops []fairsched.JobOp) (err error) {
	defer guard("commit jobs", &err)
	bufs := make([][]byte, len(ops)) // encoded outside the transaction
	for i, op := range ops {
		if op.Put != nil {
			if !op.Put.Valid() {
				return fmt.Errorf("%w: %w: boltstore: job record %d (%q/%q) holds values no scheduler writes",
					fairsched.ErrStore, fairsched.ErrRecordRefused, op.Put.Seq,
					policy.CleanTextN(string(op.Put.Type), 64), policy.CleanTextN(op.Put.ID, 64))
			}
			if bufs[i], err = encodeRecord(*op.Put); err != nil {
				return err
			}
		}
	}
	return s.db.Update(func(tx *bolt.Tx) error {
		if _, err := stateBucket(tx); err != nil {
			return err
		}
		b, err := tx.CreateBucketIfNotExists(jobsBucket)
		if err != nil {
			return err
		}
		var k [8]byte
		for i, op := range ops {
			if op.Put != nil {
				binary.BigEndian.PutUint64(k[:], op.Put.Seq)
				err = b.Put(k[:], bufs[i])
			} else {
				binary.BigEndian.PutUint64(k[:], op.Delete)
				err = b.Delete(k[:])
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
}

// encodeRecord returns rec as the store writes it.
func encodeRecord(rec fairsched.JobRecord) ([]byte, error) {
	data, err := json.Marshal(rec)
	if err != nil {
		// Data-dependent (a time past year 9999): the same record fails
		// again, so the scheduler commits the others without it.
		return nil, fmt.Errorf("%w: boltstore: encoding job %s/%s: %w", fairsched.ErrRecordRefused, rec.Type, rec.ID, err)
	}
	return append([]byte{recordVersion}, data...), nil
}

// decodeRecord returns the record data encodes. Data of another version,
// that does not decode, or that no scheduler could have written (see
// core.JobRecord.Valid) is an error, never a misread record.
func decodeRecord(data []byte) (fairsched.JobRecord, error) {
	var rec fairsched.JobRecord
	switch {
	case len(data) == 0:
		return rec, errors.New("an empty record")
	case data[0] != recordVersion:
		return rec, fmt.Errorf("record version %d, newer than this version's %d", data[0], recordVersion)
	}
	dec := json.NewDecoder(bytes.NewReader(data[1:]))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rec); err != nil {
		return fairsched.JobRecord{}, fmt.Errorf("the record does not decode: %w", err)
	}
	if dec.More() {
		return fairsched.JobRecord{}, errors.New("trailing data after the record")
	}
	if !rec.Valid() {
		return fairsched.JobRecord{}, fmt.Errorf("record %d (%q/%q) holds values no scheduler writes", rec.Seq,
			policy.CleanTextN(string(rec.Type), 64), policy.CleanTextN(rec.ID, 64))
	}
	return rec, nil
}

// Close closes the file.
//
// Close may race a scheduler still writing (closed before the scheduler
// had stopped): bbolt waits for the transaction under way, and the writes
// after it fail with an error wrapping fairsched.ErrStore, which the
// scheduler logs. Close the scheduler first to keep its last writes.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return errors.New("boltstore: closed twice")
	}
	return s.db.Close()
}

// The layout of a bbolt meta page: a 16-byte page header, then the meta
// (magic, version, page size, flags, root bucket, freelist, page count...).
const (
	metaMagic      = 0xED0CDAED
	offMagic       = 16
	offPageSize    = 24
	offPageCount   = 56
	metaHeaderSize = 64
)

// checkSize refuses a file one of whose meta pages (the one at offset 0,
// and the one a page size later) has bbolt's magic and counts more pages
// than the file holds: a truncated file.
func checkSize(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("%w: boltstore: read %s: %w", fairsched.ErrStore, path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("%w: boltstore: read %s: %w", fairsched.ErrStore, path, err)
	}
	size := uint64(fi.Size())
	// The two meta pages: the first page, and the next (at most 1 MiB in).
	data := make([]byte, min(size, 1<<20+metaHeaderSize))
	if _, err := io.ReadFull(f, data); err != nil {
		return fmt.Errorf("%w: boltstore: read %s: %w", fairsched.ErrStore, path, err)
	}
	offsets := []uint64{0}
	if len(data) >= metaHeaderSize {
		if ps := uint64(binary.LittleEndian.Uint32(data[offPageSize:])); ps >= 512 && ps <= 1<<20 {
			offsets = append(offsets, ps)
		}
	}
	for _, off := range offsets {
		if off+metaHeaderSize > uint64(len(data)) {
			continue
		}
		m := data[off:]
		if binary.LittleEndian.Uint32(m[offMagic:]) != metaMagic {
			continue
		}
		ps := uint64(binary.LittleEndian.Uint32(m[offPageSize:]))
		pages := binary.LittleEndian.Uint64(m[offPageCount:])
		if ps == 0 || pages > size/ps {
			return fmt.Errorf("%w: boltstore: %s is truncated: its meta page counts %d pages of %d bytes, the file holds %d bytes",
				fairsched.ErrStore, path, pages, ps, size)
		}
	}
	return nil
}
