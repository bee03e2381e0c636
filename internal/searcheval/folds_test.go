package searcheval

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func foldEntries() []Entry {
	var es []Entry
	for _, s := range []string{"fs", "git", "web", "pdf", "maps", "mail"} {
		es = append(es, Entry{ID: s + "/a", Server: s}, Entry{ID: s + "/b", Server: s})
	}
	return append(es, Entry{ID: "plugin"}) // no server: a server of its own
}

func TestHomeServer(t *testing.T) {
	server := ServerOf(foldEntries())
	tests := []struct {
		name string
		q    Query
		want string
	}{
		{"one server", Query{GoldIDs: []string{"git/a", "git/b"}}, "git"},
		{"majority wins", Query{GoldIDs: []string{"fs/a", "web/a", "web/b"}}, "web"},
		{"tie goes to the first gold", Query{GoldIDs: []string{"pdf/a", "fs/a"}}, "pdf"},
		{"any-of counts its first known id", Query{GoldAnyOf: [][]string{{"nowhere/x", "mail/a", "fs/a"}, {"fs/b"}}}, "mail"},
		{"tool without a server", Query{GoldIDs: []string{"plugin"}}, "plugin"},
		{"no gold in the catalogue", Query{GoldIDs: []string{"nowhere/x"}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := HomeServer(tt.q, server); got != tt.want {
				t.Errorf("HomeServer = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestServerFolds(t *testing.T) {
	entries := foldEntries()
	var queries []Query
	for i, ids := range [][]string{
		{"fs/a"}, {"fs/b"}, {"fs/a", "git/a"}, {"git/a"}, {"web/a"}, {"web/b", "pdf/a", "pdf/b"},
		{"pdf/a"}, {"maps/a"}, {"mail/a"}, {"mail/b"}, {"plugin"}, {"nowhere/x"}, {"fs/b", "mail/a"},
	} {
		queries = append(queries, Query{ID: string(rune('a' + i)), GoldIDs: ids})
	}
	sp, err := ServerFolds(entries, queries, 3, 7)
	if err != nil {
		t.Fatal(err)
	}
	again, err := ServerFolds(entries, queries, 3, 7)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(sp, again); diff != "" {
		t.Errorf("the same seed gave another split (-first +second):\n%s", diff)
	}
	server := ServerOf(entries)
	sizes := make([]int, 3)
	for i, q := range queries {
		f, home := sp.QueryFold[i], sp.Home[i]
		if home == "" {
			if f != -1 {
				t.Errorf("query %s without a known gold tool is in fold %d", q.ID, f)
			}
			continue
		}
		if home != HomeServer(q, server) {
			t.Errorf("query %s: home %q, want %q", q.ID, home, HomeServer(q, server))
		}
		if want, ok := sp.ServerFold[home]; !ok || f != want {
			t.Errorf("query %s is in fold %d, its server %s in fold %d (%v)", q.ID, f, home, want, ok)
		}
		sizes[f]++
	}
	// Every server's queries share one fold: a server in two folds would
	// show as two folds among the queries whose home it is.
	folds := make(map[string]map[int]bool)
	for i, home := range sp.Home {
		if home == "" {
			continue
		}
		if folds[home] == nil {
			folds[home] = make(map[int]bool)
		}
		folds[home][sp.QueryFold[i]] = true
	}
	for s, fs := range folds {
		if len(fs) != 1 {
			t.Errorf("server %s has queries in folds %v", s, fs)
		}
	}
	for f, n := range sizes {
		if n == 0 {
			t.Errorf("fold %d is empty (sizes %v)", f, sizes)
		}
	}
	if _, err := ServerFolds(entries, queries, 1, 7); err == nil {
		t.Error("1 fold: no error")
	}
	if _, err := ServerFolds(entries, queries[:1], 2, 7); err == nil {
		t.Error("2 folds over one server: no error")
	}
}

func TestServerFoldsSeed(t *testing.T) {
	entries := foldEntries()
	var queries []Query
	for _, id := range []string{"fs/a", "git/a", "web/a", "pdf/a", "maps/a", "mail/a"} {
		queries = append(queries, Query{GoldIDs: []string{id}})
	}
	seen := make(map[string]bool)
	for seed := range uint64(8) {
		sp, err := ServerFolds(entries, queries, 2, seed)
		if err != nil {
			t.Fatal(err)
		}
		seen[cmp.Diff(nil, sp.QueryFold)] = true
	}
	if len(seen) < 2 {
		t.Error("eight seeds gave one split: the seed does not shuffle equally busy servers")
	}
}
