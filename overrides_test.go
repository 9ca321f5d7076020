package gentlecrawl

import (
	"strings"
	"testing"
	"time"
)

func TestFloorForHostRules(t *testing.T) {
	warsaw, err := time.LoadLocation("Europe/Warsaw")
	if err != nil {
		t.Skip("no time zone database:", err)
	}
	busy := HourWindow{From: 9 * 60, To: 18 * 60, Location: warsaw, Delay: 5 * time.Second}
	night := HourWindow{From: 22 * 60, To: 6 * 60, Delay: 2 * time.Second} // UTC
	rules := []HostRule{
		{Host: "shop.example", Delay: 3 * time.Second, Until: time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)},
		{Host: "*.example", Windows: []HourWindow{busy, night}},
	}
	noon := time.Date(2026, 12, 1, 12, 0, 0, 0, warsaw)
	for _, tt := range []struct {
		host string
		now  time.Time
		want time.Duration
		why  string
	}{
		{"other.test", noon, time.Second, "delay"},
		{"shop.example", noon, 5 * time.Second, "09:00 and 18:00 Europe/Warsaw"},
		{"shop.example", noon.Add(8 * time.Hour), 3 * time.Second, "until 2027-01-01"}, // 20:00
		{"shop.example", time.Date(2027, 2, 1, 20, 0, 0, 0, warsaw), time.Second, "delay"},
		{"a.b.example", time.Date(2026, 12, 1, 23, 30, 0, 0, time.UTC), 2 * time.Second, "22:00 and 06:00"},
		{"a.b.example", time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC), time.Second, "delay"}, // To is exclusive
		{"example", noon, 5 * time.Second, "09:00"},
		{"notexample", noon, time.Second, "delay"},
	} {
		got, why := floorFor(rules, tt.host, tt.now, time.Second, "delay 1s")
		if got != tt.want || !strings.Contains(why, tt.why) {
			t.Errorf("floorFor(%s, %v) = %v (%s), want %v (%s)", tt.host, tt.now, got, why, tt.want, tt.why)
		}
	}
}
