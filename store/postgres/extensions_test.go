package postgres_test

import (
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/antlerhq/antler/store"
	"github.com/antlerhq/antler/store/postgres"
)

func TestExtensionsVersions(t *testing.T) {
	a, b := twoReplicas(t)
	ctx := t.Context()
	if _, err := a.LatestExtensions(ctx); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("LatestExtensions on an empty database = %v", err)
	}
	if v, err := a.ExtensionsVersion(ctx); err != nil || v != 0 {
		t.Fatalf("ExtensionsVersion = %d %v", v, err)
	}
	notified := make(chan string, 4)
	newEvents(t, b, postgres.EventsOptions{Listen: map[string]func(string){
		postgres.ExtensionsChannel: func(p string) {
			if p != "" {
				notified <- p
			}
		}}})
	time.Sleep(100 * time.Millisecond)
	doc := []byte(`{"mcpServers": {"x": {"type": "http", "url": "http://127.0.0.1:1"}},  "skills": {}}`)
	v1, err := a.PutExtensions(ctx, doc, "A")
	if err != nil {
		t.Fatal(err)
	}
	select {
	case p := <-notified:
		if v, err := strconv.ParseInt(p, 10, 64); err != nil || v != v1 {
			t.Errorf("notified %q, want version %d", p, v1)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no notification on the other replica")
	}
	got, err := b.LatestExtensions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if string(got.Doc) != string(doc) || got.Version != v1 || got.Owner != "A" || got.SHA256 != postgres.HashDoc(doc) {
		t.Errorf("LatestExtensions = %+v (doc %s)", got, got.Doc)
	}
	v2, err := b.PutExtensions(ctx, []byte(`{"mcpServers": {}}`), "B")
	if err != nil || v2 <= v1 {
		t.Fatalf("second version %d after %d: %v", v2, v1, err)
	}
	if v, _ := a.ExtensionsVersion(ctx); v != v2 {
		t.Errorf("ExtensionsVersion = %d, want %d", v, v2)
	}
	if _, err := a.PutExtensions(ctx, []byte(`{broken`), "A"); err == nil {
		t.Error("invalid JSON stored")
	}
}
