package debugpage

import "testing"

func TestGrouped(t *testing.T) {
	for n, want := range map[int]string{
		0: "0", 7: "7", 999: "999", 1000: "1\u202f000", 12345: "12\u202f345",
		999999: "999\u202f999", 1234567: "1\u202f234\u202f567", -1234: "-1\u202f234",
	} {
		if got := grouped(n); got != want {
			t.Errorf("grouped(%d) = %q, want %q", n, got, want)
		}
	}
}
