package cli

import (
	"context"
	"fmt"

	"github.com/antlerhq/antler/agent"
	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/memory"
	"github.com/antlerhq/antler/model"
)

// wireMemory builds the long-term memory: documents under the home
// (backend_config.storage_path), extraction by backend_config.model's
// models[] entry (the default model when it names none) when the section
// is on. With the section off (or absent) the manager is built all the
// same, without a model, so that the /api/memory routes (DeerFlow's
// Memory page) still show and edit the documents, as DeerFlow's do; the
// lead agent then gets no memory (agentMemory). app.Close drains the
// pending extractions within the section's
// shutdown_flush_timeout_seconds (memory.Manager.Close bounds it).
func (a *app) wireMemory(ctx context.Context, home string) error {
	mc := a.cfg.Memory
	var extractor model.ChatModel
	if mc.MemoryOn() {
		m, err := a.memoryModel(ctx)
		if err != nil {
			return err
		}
		extractor = m
	}
	mgr, err := memory.New(memory.Options{Config: mc, Home: home, Model: extractor, Logger: a.logger})
	if err != nil && !mc.Enabled {
		a.logger.Debug("memory: off, and its documents cannot be served", "err", err)
		return nil
	}
	if err != nil {
		return &config.Error{File: a.cfg.Path, Key: "memory", Msg: err.Error(), Err: err}
	}
	a.memory = mgr
	a.onClose(func() error { return mgr.Close(context.Background()) })
	return nil
}

// memoryModel builds the extraction model: the models[] entry
// backend_config.model.model names (by name or model id), else the
// default model.
func (a *app) memoryModel(ctx context.Context) (model.ChatModel, error) {
	name := a.cfg.Memory.BackendConfig.Model.Model
	entry, ok := a.cfg.MemoryModel(name)
	if !ok {
		return nil, &config.Error{File: a.cfg.Path, Key: "memory.backend_config.model.model",
			Msg: fmt.Sprintf("%q is not a models[] entry", name)}
	}
	idx := -1
	for i := range a.cfg.Models {
		if &a.cfg.Models[i] == entry {
			idx = i
		}
	}
	if idx < 0 {
		return nil, fmt.Errorf("memory: model %q is not in models[]", entry.Name)
	}
	m, err := a.g.opts.Registry.BuildModel(ctx, a.env, a.cfg.Models[idx], idx)
	if err != nil {
		return nil, fmt.Errorf("memory: build the extraction model %q: %w", entry.Name, err)
	}
	return agent.NamedModel(entry.Name, m), nil
}

// agentMemory is the memory the lead agent uses: nil (no interface
// holding a nil manager) when memory is off or its backend is noop.
func (a *app) agentMemory() agent.Memory {
	if !a.memory.Enabled() {
		return nil
	}
	return a.memory
}
