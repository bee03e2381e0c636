package config

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Memory is DeerFlow's memory section: long-term, per-user memory
// (package memory). The host-shared keys are at the top; the deermem
// backend's keys are under backend_config, where DeerFlow keeps them.
//
// A config without a memory section has memory off (DeerFlow's default is
// on): extraction makes a model call after every turn, which a config
// that never mentions memory did not ask for. A memory section present
// takes DeerFlow's defaults, enabled included.
type Memory struct {
	// Enabled turns memory on (default true when the section is present).
	Enabled bool `yaml:"enabled"`
	// Mode is "middleware" (default: facts are extracted after each turn
	// and injected into the system prompt) or "tool" (the model calls
	// memory_search, memory_add, memory_update and memory_delete; only
	// the summaries are injected).
	Mode string `yaml:"mode"`
	// InjectionEnabled puts the memory into the system prompt (default
	// true).
	InjectionEnabled bool `yaml:"injection_enabled"`
	// ShutdownFlushTimeoutSeconds bounds the drain of pending extractions
	// at graceful shutdown (default 30, 1 to 300).
	ShutdownFlushTimeoutSeconds float64 `yaml:"shutdown_flush_timeout_seconds"`
	// ManagerClass is the backend: "deermem" (default) or "noop". Other
	// DeerFlow backends (mem0, honcho, openviking, dotted paths) are
	// refused.
	ManagerClass string `yaml:"manager_class"`
	// BackendConfig is the deermem backend's configuration.
	BackendConfig MemoryBackend `yaml:"backend_config"`

	// LegacyKeys are the deermem keys found at the top of the section
	// (DeerFlow's pre-backend layout), moved into BackendConfig with a
	// warning, as DeerFlow moves them.
	LegacyKeys []string `yaml:"-"`
}

// MemoryModel is backend_config.model. Antler builds models from
// models[] only: Model names a models[] entry (by name, or by its model
// id); empty means the default model.
type MemoryModel struct {
	Model string `yaml:"model"`
	// Provider, APIKey, BaseURL and Temperature are DeerFlow's way to
	// build a second client; Antler refuses them (name a models[] entry).
	Provider    string   `yaml:"provider"`
	APIKey      string   `yaml:"api_key"`
	BaseURL     string   `yaml:"base_url"`
	Temperature *float64 `yaml:"temperature"`
}

// MemoryBackend is the deermem backend's configuration (DeerFlow's
// DeerMemConfig), with DeerFlow's defaults and ranges. Keys whose
// feature Antler does not implement are accepted at their default value
// and refused otherwise.
type MemoryBackend struct {
	// StoragePath is the data root; "" means the Antler home. Each user's
	// document is {root}/users/{user}/{manifest_filename}.
	StoragePath string `yaml:"storage_path"`
	// StorageClass is "" or "file" (default: files under the root) or
	// "store" (Antler's own: the documents live in the database store, so
	// that replicas share them). Dotted class paths are refused.
	StorageClass string `yaml:"storage_class"`
	// StrictUserScope is accepted; Antler always scopes by user.
	StrictUserScope bool `yaml:"strict_user_scope"`
	// ManifestFilename is the document's file name (default memory.json).
	ManifestFilename string `yaml:"manifest_filename"`
	// FileLockTimeoutSeconds is accepted (1 to 120); writes of one
	// process are serialised per user in memory.
	FileLockTimeoutSeconds int `yaml:"file_lock_timeout_seconds"`
	// RetrievalAdapter is "fts5" (default: SQLite FTS5) or "" (substring
	// search only).
	RetrievalAdapter string `yaml:"retrieval_adapter"`
	// DebounceSeconds is the wait before a queued extraction runs
	// (default 30, 1 to 300).
	DebounceSeconds int `yaml:"debounce_seconds"`
	// QueueMaxDepth caps pending extractions (default 1000; 0 means
	// Antler's hard cap, 10000).
	QueueMaxDepth int `yaml:"queue_max_depth"`
	// Model is the extraction model.
	Model MemoryModel `yaml:"model"`
	// MaxFacts caps each user's facts (default 100, 10 to 500); the
	// lowest-confidence facts are evicted first.
	MaxFacts int `yaml:"max_facts"`
	// FactEvictionPolicy must be "confidence" (hybrid-v1 is refused).
	FactEvictionPolicy         string   `yaml:"fact_eviction_policy"`
	FactEvictionShadowEnabled  bool     `yaml:"fact_eviction_shadow_enabled"`
	EvictionConfidenceWeight   float64  `yaml:"eviction_confidence_weight"`
	EvictionConfirmationWeight float64  `yaml:"eviction_confirmation_weight"`
	EvictionAccessWeight       float64  `yaml:"eviction_access_weight"`
	EvictionConfirmationHalf   int      `yaml:"eviction_confirmation_half_life_days"`
	EvictionAccessHalf         int      `yaml:"eviction_access_half_life_days"`
	EvictionCorrectionFraction float64  `yaml:"eviction_correction_reserved_fraction"`
	EvictionCorrectionMax      int      `yaml:"eviction_correction_reserved_max"`
	EvictionAuditMaxEntries    int      `yaml:"eviction_audit_max_entries"`
	FactConfidenceThreshold    float64  `yaml:"fact_confidence_threshold"`
	MaxInjectionTokens         int      `yaml:"max_injection_tokens"`
	TokenCounting              string   `yaml:"token_counting"`
	GuaranteedCategories       []string `yaml:"guaranteed_categories"`
	GuaranteedTokenBudget      int      `yaml:"guaranteed_token_budget"`
	StalenessReviewEnabled     bool     `yaml:"staleness_review_enabled"`
	StalenessAgeDays           int      `yaml:"staleness_age_days"`
	StalenessMinCandidates     int      `yaml:"staleness_min_candidates"`
	StalenessMaxRemovals       int      `yaml:"staleness_max_removals_per_cycle"`
	StalenessProtected         []string `yaml:"staleness_protected_categories"`
	StalenessMaxLifetimeMult   float64  `yaml:"staleness_max_lifetime_multiplier"`
	StalenessMaxExtensionDays  int      `yaml:"staleness_max_extension_days"`
	ConsolidationEnabled       bool     `yaml:"consolidation_enabled"`
	ConsolidationMinFacts      int      `yaml:"consolidation_min_facts"`
	ConsolidationMaxGroups     int      `yaml:"consolidation_max_groups_per_cycle"`
	ConsolidationMaxSources    int      `yaml:"consolidation_max_sources"`
	PatternsDir                string   `yaml:"patterns_dir"`
	PromptsDir                 string   `yaml:"prompts_dir"`
	WatermarkMaxKeys           int      `yaml:"watermark_max_keys"`
}

func defaultMemoryBackend() MemoryBackend {
	return MemoryBackend{
		ManifestFilename: "memory.json", FileLockTimeoutSeconds: 10, RetrievalAdapter: "fts5",
		DebounceSeconds: 30, QueueMaxDepth: 1000, MaxFacts: 100, FactEvictionPolicy: "confidence",
		EvictionConfidenceWeight: 0.65, EvictionConfirmationWeight: 0.25, EvictionAccessWeight: 0.10,
		EvictionConfirmationHalf: 90, EvictionAccessHalf: 30, EvictionCorrectionFraction: 0.10,
		EvictionCorrectionMax: 10, EvictionAuditMaxEntries: 200, FactConfidenceThreshold: 0.7,
		MaxInjectionTokens: 2000, TokenCounting: "tiktoken", GuaranteedCategories: []string{"correction"},
		GuaranteedTokenBudget: 500, StalenessReviewEnabled: true, StalenessAgeDays: 90,
		StalenessMinCandidates: 3, StalenessMaxRemovals: 10, StalenessProtected: []string{"correction"},
		StalenessMaxLifetimeMult: 20, StalenessMaxExtensionDays: 3650, ConsolidationMinFacts: 8,
		ConsolidationMaxGroups: 3, ConsolidationMaxSources: 8, WatermarkMaxKeys: 4096,
	}
}

// defaultMemory is the section's value when it is present (DeerFlow's
// defaults); Default has memory off.
func defaultMemory() Memory {
	return Memory{Enabled: true, Mode: "middleware", InjectionEnabled: true, ShutdownFlushTimeoutSeconds: 30,
		ManagerClass: "deermem", BackendConfig: defaultMemoryBackend()}
}

// memoryLegacyKeys are the deermem keys DeerFlow accepted at the top of
// the memory section before backend_config, and moves there.
func memoryLegacyKeys() []string {
	return []string{
		"storage_path", "storage_class", "debounce_seconds", "max_facts", "fact_confidence_threshold",
		"max_injection_tokens", "token_counting", "guaranteed_categories", "guaranteed_token_budget",
		"staleness_review_enabled", "staleness_age_days", "staleness_min_candidates",
		"staleness_max_removals_per_cycle", "staleness_protected_categories",
		"staleness_max_lifetime_multiplier", "staleness_max_extension_days", "consolidation_enabled",
		"consolidation_min_facts", "consolidation_max_groups_per_cycle", "consolidation_max_sources",
		"model_name",
	}
}

// UnmarshalYAML implements yaml.Unmarshaler: a present section starts
// from DeerFlow's defaults, and the legacy top-level deermem keys are
// moved under backend_config (an explicit backend_config key wins).
func (m *Memory) UnmarshalYAML(n *yaml.Node) error {
	type plain Memory
	v := plain(defaultMemory())
	var legacy []string
	if n.Kind == yaml.MappingNode {
		moved := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, val := n.Content[i], n.Content[i+1]
			if !slices.Contains(memoryLegacyKeys(), k.Value) || isNull(val) {
				continue
			}
			legacy = append(legacy, k.Value)
			if k.Value == "model_name" {
				var name string
				if err := val.Decode(&name); err != nil {
					return err
				}
				v.BackendConfig.Model.Model = name
				continue
			}
			moved.Content = append(moved.Content, k, val)
		}
		if err := moved.Decode(&v.BackendConfig); err != nil {
			return err
		}
	}
	if err := n.Decode(&v); err != nil {
		return err
	}
	v.LegacyKeys = legacy
	*m = Memory(v)
	return nil
}

// memoryRange records an error unless lo <= v <= hi.
func memoryRange[T int | float64](p *parser, key string, v, lo, hi T) {
	if v < lo || v > hi {
		p.invalid(key, "must be between %v and %v, got %v", lo, hi, v)
	}
}

func (p *parser) validateMemory() {
	m := &p.cfg.Memory
	const at = "memory"
	if len(m.LegacyKeys) > 0 {
		p.cfg.Warnings = append(p.cfg.Warnings, fmt.Sprintf("%s: memory: moved %s under memory.backend_config (DeerFlow's layout); move them there to silence this",
			p.file, strings.Join(m.LegacyKeys, ", ")))
	}
	if m.Mode != "middleware" && m.Mode != "tool" {
		p.invalid(at+".mode", "must be middleware or tool, got %q", m.Mode)
	}
	memoryRange(p, at+".shutdown_flush_timeout_seconds", m.ShutdownFlushTimeoutSeconds, 1, 300)
	switch m.ManagerClass {
	case "deermem", "noop":
	default:
		p.invalid(at+".manager_class", "%q is not implemented: Antler has the deermem and noop backends", m.ManagerClass)
	}
	p.validateMemoryBackend(&m.BackendConfig)
}

func (p *parser) validateMemoryBackend(b *MemoryBackend) {
	const at = "memory.backend_config"
	def := defaultMemoryBackend()
	refuse := func(key string, unset bool, why string) {
		if !unset {
			p.invalid(joinKey(at, key), "is not implemented by Antler (%s); leave it at DeerFlow's default", why)
		}
	}
	switch b.StorageClass {
	case "", "file", "store":
	default:
		p.invalid(joinKey(at, "storage_class"), "must be file or store, got %q (Antler loads no storage classes)", b.StorageClass)
	}
	if f := b.ManifestFilename; f != filepath.Base(f) || !strings.HasSuffix(f, ".json") || strings.HasPrefix(f, ".") {
		p.invalid(joinKey(at, "manifest_filename"), "must be a plain .json file name, got %q", f)
	}
	memoryRange(p, joinKey(at, "file_lock_timeout_seconds"), b.FileLockTimeoutSeconds, 1, 120)
	if b.RetrievalAdapter != "fts5" && b.RetrievalAdapter != "" {
		p.invalid(joinKey(at, "retrieval_adapter"), "must be fts5 or empty, got %q (Antler loads no adapter factories)", b.RetrievalAdapter)
	}
	memoryRange(p, joinKey(at, "debounce_seconds"), b.DebounceSeconds, 1, 300)
	memoryRange(p, joinKey(at, "queue_max_depth"), b.QueueMaxDepth, 0, 10000)
	mm := b.Model
	refuse("model", mm.Provider == "" && mm.APIKey == "" && mm.BaseURL == "" && mm.Temperature == nil,
		"provider, api_key, base_url and temperature build a second client; name a models[] entry in model.model instead")
	if mm.Model != "" {
		if _, ok := p.memoryModel(mm.Model); !ok {
			p.checkModelName(joinKey(at, "model.model"), mm.Model)
		}
	}
	memoryRange(p, joinKey(at, "max_facts"), b.MaxFacts, 10, 500)
	refuse("fact_eviction_policy", b.FactEvictionPolicy == "confidence", "only the confidence policy")
	refuse("fact_eviction_shadow_enabled", !b.FactEvictionShadowEnabled, "no hybrid-v1 shadow audit")
	if w := b.EvictionConfidenceWeight + b.EvictionConfirmationWeight + b.EvictionAccessWeight; math.Abs(w-1) > 1e-9 {
		p.invalid(joinKey(at, "eviction_confidence_weight"), "the three eviction weights must sum to 1.0, got %v", w)
	}
	memoryRange(p, joinKey(at, "fact_confidence_threshold"), b.FactConfidenceThreshold, 0, 1)
	memoryRange(p, joinKey(at, "max_injection_tokens"), b.MaxInjectionTokens, 100, 8000)
	if b.TokenCounting != "tiktoken" && b.TokenCounting != "char" {
		p.invalid(joinKey(at, "token_counting"), "must be tiktoken or char, got %q", b.TokenCounting)
	}
	memoryRange(p, joinKey(at, "guaranteed_token_budget"), b.GuaranteedTokenBudget, 50, 2000)
	memoryRange(p, joinKey(at, "staleness_age_days"), b.StalenessAgeDays, 30, 365)
	memoryRange(p, joinKey(at, "staleness_min_candidates"), b.StalenessMinCandidates, 1, 50)
	memoryRange(p, joinKey(at, "staleness_max_removals_per_cycle"), b.StalenessMaxRemovals, 1, 50)
	memoryRange(p, joinKey(at, "staleness_max_lifetime_multiplier"), b.StalenessMaxLifetimeMult, 1, 100)
	memoryRange(p, joinKey(at, "staleness_max_extension_days"), b.StalenessMaxExtensionDays, 90, 36500)
	refuse("consolidation_enabled", !b.ConsolidationEnabled, "no fact consolidation")
	refuse("patterns_dir", b.PatternsDir == def.PatternsDir, "the signal patterns are built in")
	refuse("prompts_dir", b.PromptsDir == def.PromptsDir, "the prompts are built in")
}

// memoryModel finds the models[] entry for backend_config.model.model:
// by entry name, else by the entry's model id.
func (p *parser) memoryModel(name string) (*Model, bool) {
	return p.cfg.MemoryModel(name)
}

// MemoryModel returns the models[] entry memory extraction uses for
// backend_config.model.model: the entry of that name, else the first
// entry whose model id it is, else (for "") the default model.
func (c *Config) MemoryModel(name string) (*Model, bool) {
	if name == "" {
		return c.DefaultModel()
	}
	if m, ok := c.Model(name); ok {
		return m, true
	}
	for i := range c.Models {
		if c.Models[i].Model == name {
			return &c.Models[i], true
		}
	}
	return nil, false
}

// MemoryOn reports whether memory is enabled with a backend that keeps
// something (deermem).
func (m Memory) MemoryOn() bool { return m.Enabled && m.ManagerClass == "deermem" }

// memoryOff is the section's value when the file has none.
func memoryOff() Memory {
	m := defaultMemory()
	m.Enabled = false
	return m
}
