// Package boltstore keeps a fairsched scheduler's state (fairsched.Store)
// in a file, on bbolt (go.etcd.io/bbolt): an embedded, pure-Go key/value
// store with ACID transactions and a single file, well kept (the storage
// engine of etcd), needing no server and no cgo. It lives in its own package
// so that programs that do not persist do not build it.
//
// The state is one JSON document in one bucket, replaced in one transaction
// per save: a crash leaves the previous or the new state, never half of one.
package boltstore

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/fairsched/fairsched"
)

var (
	bucket = []byte("fairsched")
	key    = []byte("state")
)

// Store is a fairsched.Store in a bbolt file. Close it after the scheduler.
type Store struct{ db *bolt.DB }

var _ fairsched.Store = (*Store)(nil)

// Open opens (or creates) the store at path. A file that is not a bbolt
// database, or one another process holds, is an error, and the file is left
// as it was.
func Open(path string) (*Store, error) {
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		return nil, fmt.Errorf("boltstore: open %s: %w", path, err)
	}
	return &Store{db: db}, nil
}

// Load returns the saved state; a store never saved to holds none. A
// document that does not decode is an error.
func (s *Store) Load() (fairsched.StoreState, error) {
	var st fairsched.StoreState
	err := s.db.View(func(tx *bolt.Tx) error {
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
func (s *Store) Save(st fairsched.StoreState) error {
	data, err := json.Marshal(st)
	if err != nil {
		return fmt.Errorf("boltstore: %w", err)
	}
	return s.db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bucket)
		if err != nil {
			return err
		}
		return b.Put(key, data)
	})
}

// Close closes the file.
func (s *Store) Close() error {
	if s.db == nil {
		return errors.New("boltstore: closed twice")
	}
	err := s.db.Close()
	s.db = nil
	return err
}
