package tokens

import "testing"

func TestCostText(t *testing.T) {
	for usd, want := range map[float64]string{
		0:         "$0",
		0.00004:   "<$0.0001",
		0.0123:    "$0.0123",
		0.12345:   "$0.1235",
		1.25:      "$1.25",
		123.4:     "$123.40",
		-1:        "$0",
		0.0001:    "$0.0001",
		0.9999999: "$1.00",
	} {
		if got := CostText(usd); got != want {
			t.Errorf("CostText(%g) = %q, want %q", usd, got, want)
		}
	}
}

func TestCountText(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1.0k", 12_345: "12.3k", 999_949: "999.9k", 999_950: "1.0M", 4_500_000: "4.5M"} {
		if got := CountText(n); got != want {
			t.Errorf("CountText(%d) = %q, want %q", n, got, want)
		}
	}
}
