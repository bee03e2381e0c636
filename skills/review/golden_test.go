package review

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// completedAt is the fixed completion time of the golden reports.
const completedAt = "2026-07-10T00:00:00Z"

// goldenCase is one fixture package of testdata/fixtures reviewed into
// testdata/golden/<name>.json (facts and report) and <name>.en.md.
type goldenCase struct {
	name      string
	profile   Profile
	limits    Limits
	readiness string
}

var goldenCases = []goldenCase{
	{name: "publish-candidate", readiness: ReadinessPublishCandidate},
	{name: "needs-revision", readiness: ReadinessRevise},
	{name: "blocked", readiness: ReadinessBlocked},
	{name: "prompt-injection", readiness: ReadinessRevise},
	{name: "zh-output", readiness: ReadinessPublishCandidate},
	// The reference file lies past the total budget: the package is
	// truncated, so a review of scope "all" cannot be a candidate.
	{name: "partial-package", limits: Limits{MaxTotalBytes: 1024}, readiness: ReadinessRevise},
	{name: "resources", readiness: ReadinessPublishCandidate},
	{name: "nested", readiness: ReadinessBlocked},
	{name: "frontmatter-problems", profile: ProfileAgentSkills, readiness: ReadinessRevise},
	{name: "no-skill-md", readiness: ReadinessBlocked},
}

func reviewFixture(t *testing.T, c goldenCase) (*Snapshot, *Facts, *Report) {
	t.Helper()
	dir := filepath.Join("testdata", "fixtures", c.name)
	subject := Subject{Source: SourceDirectory, DisplayRef: c.name, NameHint: &c.name}
	snap, err := ReadDirPath(context.Background(), dir, subject, c.limits)
	if err != nil {
		t.Fatal(err)
	}
	profile := c.profile
	if profile == "" {
		profile = ProfileDeerFlow
	}
	facts := Analyze(snap, profile)
	return snap, facts, BuildReport(facts, []string{"all"}, completedAt)
}

func TestGolden(t *testing.T) {
	for _, c := range goldenCases {
		t.Run(c.name, func(t *testing.T) {
			_, facts, report := reviewFixture(t, c)
			if report.Readiness != c.readiness {
				t.Errorf("readiness = %s, want %s", report.Readiness, c.readiness)
			}
			doc, err := MarshalStable(map[string]any{"facts": facts, "report": report})
			if err != nil {
				t.Fatal(err)
			}
			var pretty bytes.Buffer
			if err := json.Indent(&pretty, doc, "", "  "); err != nil {
				t.Fatal(err)
			}
			pretty.WriteByte('\n')
			checkGolden(t, c.name+".json", pretty.Bytes())
			checkGolden(t, c.name+".en.md", []byte(RenderMarkdown(report, facts, LocaleEN)))
		})
	}
}

func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	file := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run go test ./skills/review -run TestGolden -update)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs (-want +got):\n%s", file, diff)
	}
}
