package toolset_test

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/toolset"
)

// The background-task tools are bound when the runtime gives them, after
// the always-bound built-ins and right before list_uploaded_files (the
// lead's; subagents have none), as DeerFlow binds them.
func TestBackgroundTaskToolsOrder(t *testing.T) {
	names := func(t *testing.T, b toolset.Builtins) []string {
		t.Helper()
		a := &toolset.Assembler{Registry: fakeRegistry(nil), Env: &toolset.Env{Config: mustConfig(t, baseConfig)}, Builtins: b}
		ts, err := a.Assemble(t.Context(), toolset.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return ts.Names()
	}
	bg := []string{"list_background_tasks", "cancel_background_task"}
	for _, tc := range []struct {
		name     string
		builtins toolset.Builtins
	}{
		{"lead", *withUploadTool(allBuiltins)},
		{"subagent", allBuiltins},
	} {
		t.Run(tc.name, func(t *testing.T) {
			off := names(t, tc.builtins)
			if slices.Contains(off, bg[0]) || slices.Contains(off, bg[1]) {
				t.Fatalf("bound without the runtime: %v", off)
			}
			want := slices.Clone(off)
			if i := slices.Index(want, "list_uploaded_files"); i >= 0 {
				want = slices.Insert(want, i, bg...)
			} else {
				want = append(want, bg...)
			}
			on := tc.builtins
			on.ListBackgroundTasks, on.CancelBackgroundTask = fakeTool(bg[0]), fakeTool(bg[1])
			if diff := cmp.Diff(want, names(t, on)); diff != "" {
				t.Errorf("bound tools with the runtime (-want +got):\n%s", diff)
			}
		})
	}
}
