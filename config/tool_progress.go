package config

// ToolProgress is DeerFlow's tool_progress section: a guard that tracks,
// per thread and tool, calls that bring no new information (errors,
// partial results, near-duplicate results) and first hints the model to
// change course, then blocks a tool that cannot recover
// (agent.ToolProgressGuard). Off by default, as in DeerFlow. It has
// nothing to do with progress reports of running calls (tool.Progress),
// which are always on.
type ToolProgress struct {
	// Enabled turns the guard on (default false).
	Enabled bool `yaml:"enabled"`
	// StagnationThreshold is how many problem calls in a row make a tool
	// warned: a hint is added to the next model request (default 3, >= 1).
	StagnationThreshold int `yaml:"stagnation_threshold"`
	// WarnEscalationCount is how many further problem calls block a
	// warned tool the model cannot recover by retrying (rate limits,
	// transient failures) (default 2, >= 1).
	WarnEscalationCount int `yaml:"warn_escalation_count"`
	// InjectAssessment adds the hints to model requests (default true).
	InjectAssessment bool `yaml:"inject_assessment"`
	// JaccardSimilarityThreshold is the word-set similarity at which a
	// successful result counts as a near-duplicate of one of the last
	// three (default 0.8, 0 to 1).
	JaccardSimilarityThreshold float64 `yaml:"jaccard_similarity_threshold"`
	// MinWordCountForSimilarity is the fewest distinct words (of three or
	// more letters) a result needs for the near-duplicate check (default
	// 10).
	MinWordCountForSimilarity int `yaml:"min_word_count_for_similarity"`
	// ExemptTools are never tracked (default ask_clarification,
	// write_todos, present_files, task; an explicit empty list exempts
	// none).
	ExemptTools []string `yaml:"exempt_tools"`
	// MaxTrackedThreads bounds the threads tracked in memory, the least
	// recently used forgotten first (default 100, >= 1).
	MaxTrackedThreads int `yaml:"max_tracked_threads"`
}

func defaultToolProgress() ToolProgress {
	return ToolProgress{
		StagnationThreshold:        3,
		WarnEscalationCount:        2,
		InjectAssessment:           true,
		JaccardSimilarityThreshold: 0.8,
		MinWordCountForSimilarity:  10,
		ExemptTools:                []string{"ask_clarification", "write_todos", "present_files", "task"},
		MaxTrackedThreads:          100,
	}
}

func (p *parser) validateToolProgress() {
	tp := p.cfg.ToolProgress
	atLeast(p, "tool_progress.stagnation_threshold", tp.StagnationThreshold, 1)
	atLeast(p, "tool_progress.warn_escalation_count", tp.WarnEscalationCount, 1)
	atLeast(p, "tool_progress.max_tracked_threads", tp.MaxTrackedThreads, 1)
	if v := tp.JaccardSimilarityThreshold; !(v >= 0 && v <= 1) {
		p.invalid("tool_progress.jaccard_similarity_threshold", "must be between 0 and 1, got %g", v)
	}
}
