// Package bisect commits a batch a store refused for one record's data in
// parts, so that only the record at fault fails.
//
// A write refused for what it carries (a byte the database's encoding
// rejects, a key too long for its index) fails again however often it is
// sent; retried as a lost connection is, it would hold back every record
// behind it for ever. Settle splits a refused batch in halves, in order,
// and writes each in turn, down to the item at fault, which is written
// alone before it is called bad. When the first half of a refused part
// was written whole at once, the fault is in the second half, which is
// split at once instead of being written whole to learn it. One bad item
// among n costs at most 2·⌈log2 n⌉ writes after the refused one.
package bisect

// Settle deals with items, whose write as one failed with err (nil: it
// was written). write writes a part of items, in order; refused says
// whether an error is a refusal of the data; bad is handed each item
// refused alone, with its refusal. It returns how many items were dealt
// with (written, or handed to bad) — all, unless write failed otherwise
// (a lost connection, a fenced write) or bad failed: err is that failure,
// and the items from the count on were not written. clean reports that
// items were written whole at once.
func Settle[T any](items []T, err error, write func([]T) error, refused func(error) bool, bad func(T, error) error) (n int, clean bool, _ error) {
	switch {
	case err == nil:
		return len(items), true, nil
	case !refused(err):
		return 0, false, err
	case len(items) == 1:
		if err := bad(items[0], err); err != nil {
			return 0, false, err
		}
		return 1, false, nil
	}
	whole := err
	mid := len(items) / 2
	first, second := items[:mid], items[mid:]
	n, clean, err = Settle(first, write(first), write, refused, bad)
	if err != nil {
		return n, false, err
	}
	secondErr := whole
	if !clean || len(second) == 1 {
		secondErr = write(second)
	}
	m, _, err := Settle(second, secondErr, write, refused, bad)
	return mid + m, false, err
}
