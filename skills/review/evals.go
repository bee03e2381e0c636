package review

import (
	"encoding/json"
	"errors"
	"strings"
)

// Evals summarises the package's eval manifests (the JSON files under
// evals/). Schema and Valid are null when there is no manifest.
type Evals struct {
	CaseCount            int        `json:"case_count"`
	Manifests            []Manifest `json:"manifests"`
	NegativeTriggerCases int        `json:"negative_trigger_cases"`
	PositiveTriggerCases int        `json:"positive_trigger_cases"`
	// Schema is the manifests' one schema, or "mixed".
	Schema *string `json:"schema"`
	// Valid is false when a manifest is not UTF-8 JSON.
	Valid *bool `json:"valid"`
}

// Manifest is one eval manifest.
type Manifest struct {
	CaseCount            int    `json:"case_count"`
	NegativeTriggerCases int    `json:"negative_trigger_cases"`
	Path                 string `json:"path"`
	PositiveTriggerCases int    `json:"positive_trigger_cases"`
	// Schema is versioned (an object with a schema_version), skill-creator-evals
	// (an object with an evals list), trigger-eval-list (a list) or unknown.
	Schema string `json:"schema"`
	Valid  bool   `json:"valid"`
}

// analyzeEvals reads every evals/**.json file of s (in path order) and
// returns their summary and the findings of unreadable ones.
func analyzeEvals(s *Snapshot) (Evals, []Finding) {
	ev := Evals{Manifests: []Manifest{}}
	var out []Finding
	schemas := map[string]bool{}
	valid, found := true, false
	for _, f := range s.Files {
		if !strings.HasPrefix(f.Path, "evals/") || !strings.HasSuffix(f.Path, ".json") {
			continue
		}
		found = true
		if f.Kind != KindText || f.Content == nil {
			out = append(out, finding("eval.binary-manifest", SeverityWarning, f.Path,
				"Eval manifest is not UTF-8 JSON text.", "Store eval manifests as UTF-8 JSON."))
			valid = false
			continue
		}
		var payload any
		if err := json.Unmarshal([]byte(*f.Content), &payload); err != nil {
			fd := finding("eval.invalid-json", SeverityWarning, f.Path,
				"Eval manifest is not valid JSON.", "Fix the JSON syntax or remove the manifest.")
			line := jsonErrorLine(*f.Content, err)
			fd.Line, fd.Evidence = &line, err.Error()
			out = append(out, fd)
			valid = false
			continue
		}
		m := classifyManifest(payload)
		m.Path = f.Path
		ev.Manifests = append(ev.Manifests, m)
		schemas[m.Schema] = true
		ev.CaseCount += m.CaseCount
		ev.PositiveTriggerCases += m.PositiveTriggerCases
		ev.NegativeTriggerCases += m.NegativeTriggerCases
	}
	if !found {
		return ev, nil
	}
	if len(schemas) > 0 {
		schema := "mixed"
		if len(schemas) == 1 {
			for k := range schemas {
				schema = k
			}
		}
		ev.Schema = &schema
	}
	ev.Valid = &valid
	return ev, out
}

// jsonErrorLine is the 1-based line of a JSON syntax error (1 when the
// error has no offset).
func jsonErrorLine(content string, err error) int {
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		return 1
	}
	off := min(max(int(se.Offset), 0), len(content))
	return strings.Count(content[:off], "\n") + 1
}

func classifyManifest(payload any) Manifest {
	switch v := payload.(type) {
	case map[string]any:
		if _, ok := v["schema_version"].(string); ok {
			if cases, ok := v["cases"].([]any); ok {
				return caseStats("versioned", cases)
			}
			return Manifest{Schema: "versioned", Valid: true}
		}
		if cases, ok := v["evals"].([]any); ok {
			return caseStats("skill-creator-evals", cases)
		}
	case []any:
		return caseStats("trigger-eval-list", v)
	}
	return Manifest{Schema: "unknown", Valid: true}
}

// caseStats counts the cases and, among the object cases, those whose
// should_trigger is true or false.
func caseStats(schema string, cases []any) Manifest {
	m := Manifest{Schema: schema, Valid: true, CaseCount: len(cases)}
	for _, c := range cases {
		obj, ok := c.(map[string]any)
		if !ok {
			continue
		}
		switch obj["should_trigger"] {
		case true:
			m.PositiveTriggerCases++
		case false:
			m.NegativeTriggerCases++
		}
	}
	return m
}
