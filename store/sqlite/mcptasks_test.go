package sqlite_test

import (
	"testing"

	"github.com/antlerhq/antler/store/sqlite"
	"github.com/antlerhq/antler/store/storetest"
)

func TestMCPTasksConformance(t *testing.T) {
	storetest.RunMCPTasks(t, func(t *testing.T) storetest.TaskStore {
		s, err := sqlite.OpenDir(t.TempDir(), sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}
