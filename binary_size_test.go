package antler_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestBinaryNoTemplateEvaluator fails when a package of this module that
// cmd/antler links imports text/template or html/template. Their evaluator
// looks methods up by name at run time, which turns off the linker's
// elimination of unused methods for the whole binary (docs/design.md,
// "Binary size"); embedded prompts use internal/tmpl instead.
func TestBinaryNoTemplateEvaluator(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./cmd/antler").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	checked := 0
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		if len(fields) == 0 || fields[0] != modulePath && !strings.HasPrefix(fields[0], modulePath+"/") {
			continue
		}
		checked++
		for _, imp := range fields[1:] {
			if imp == "text/template" || imp == "html/template" {
				t.Errorf("%s imports %s; render templates with internal/tmpl", fields[0], imp)
			}
		}
	}
	if checked < 10 {
		t.Fatalf("go list named %d of this module's packages; want the packages cmd/antler links", checked)
	}
}

// TestBinaryNoOpenAISDK fails when cmd/antler links any package of
// github.com/openai/openai-go. Its root package imports every API area,
// whose init-registered unions keep ~20 MB of generated code in the
// binary; model/openai speaks chat completions itself (docs/design.md,
// "Binary size").
func TestBinaryNoOpenAISDK(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", "./cmd/antler").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	linked := 0
	for line := range strings.Lines(string(out)) {
		path := strings.TrimSpace(line)
		linked++
		if strings.HasPrefix(path, "github.com/openai/openai-go") {
			t.Errorf("cmd/antler links %s; model/openai speaks the API over net/http", path)
		}
	}
	if linked < 100 {
		t.Fatalf("go list named %d packages; want everything cmd/antler links", linked)
	}
}
