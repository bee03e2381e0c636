package deferred

import (
	"fmt"
	"testing"
)

// TestRunTable checks the run table against a map, with keys that share
// their first eight bytes and length, keys that are prefixes of others,
// and a hash that makes every key collide.
func TestRunTable(t *testing.T) {
	var keys []string
	for i := range 3000 {
		keys = append(keys,
			fmt.Sprintf("w%d", i),
			fmt.Sprintf("abcdefgh%dxyz", i), // same first eight bytes
			fmt.Sprintf("abcdefgh%d", i),    // a prefix of the one before
			fmt.Sprintf("x%07d", i),         // exactly eight bytes
		)
	}
	for _, collide := range []bool{false, true} {
		t.Run(fmt.Sprintf("collide=%v", collide), func(t *testing.T) {
			n := len(keys)
			if collide {
				n = 200 // every probe walks the whole cluster
			}
			var tab runTable
			tab.init(16)
			want := make(map[string]rawRun)
			hash := func(s string) (uint64, uint32) {
				p, h := hashRun(s)
				if collide {
					h = 7
				}
				return p, h
			}
			for i, k := range keys[:n] {
				p, h := hash(k)
				if _, ok := get(&tab, k, p, h); ok {
					t.Fatalf("get(%q) found a key not added", k)
				}
				v := rawRun{runs: int32(i), start: int32(i + 1), end: int32(i + 2)}
				put(&tab, []byte(k), p, h, v)
				want[k] = v
			}
			for k, v := range want {
				p, h := hash(k)
				if got, ok := get(&tab, []byte(k), p, h); !ok || got != v {
					t.Errorf("get(%q) = %v, %v; want %v", k, got, ok, v)
				}
			}
		})
	}
}
