package toolset

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"time"

	"github.com/antlerhq/antler/commandtool"
	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/tool"
)

func registerCommand(r *Registry) {
	r.RegisterTool(newCommandTool, "antler:command")
}

// newCommandTool builds an antler:command tool from its config entry's
// options: command (list of strings, required), description,
// input_schema, timeout (seconds or a Go duration string), env (map),
// cwd (relative to the config file), max_output_bytes.
func newCommandTool(_ context.Context, env *Env, entry config.ToolEntry) (*tool.Tool, error) {
	o := entry.Options
	opts := commandtool.Options{Name: entry.Name}
	err := checkOptionKeys(o, "command", "description", "input_schema", "timeout", "env", "cwd", "max_output_bytes")
	if err != nil {
		return nil, err
	}
	if opts.Command, err = stringList(o["command"]); err != nil || len(opts.Command) == 0 {
		return nil, fmt.Errorf("command: must be a non-empty list of strings, like [\"python3\", \"tool.py\"]")
	}
	if d, ok := o["description"]; ok {
		s, ok := d.(string)
		if !ok {
			return nil, fmt.Errorf("description: must be a string")
		}
		opts.Description = s
	}
	if s, ok := o["input_schema"]; ok && s != nil {
		if _, isMap := s.(map[string]any); !isMap {
			return nil, fmt.Errorf("input_schema: must be a mapping (a JSON Schema object)")
		}
		if opts.InputSchema, err = json.Marshal(s); err != nil {
			return nil, fmt.Errorf("input_schema: %v", err)
		}
	}
	if t, ok := o["timeout"]; ok {
		if opts.Timeout, err = duration(t); err != nil {
			return nil, fmt.Errorf("timeout: %v", err)
		}
	}
	if e, ok := o["env"]; ok && e != nil {
		m, ok := e.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("env: must be a mapping of strings")
		}
		opts.Env = map[string]string{}
		for k, v := range m {
			s, ok := v.(string)
			if !ok {
				return nil, fmt.Errorf("env.%s: must be a string", k)
			}
			opts.Env[k] = s
		}
	}
	if d, ok := o["cwd"]; ok {
		s, ok := d.(string)
		if !ok {
			return nil, fmt.Errorf("cwd: must be a string")
		}
		if !filepath.IsAbs(s) && env != nil && env.Config != nil && env.Config.Dir != "" {
			s = filepath.Join(env.Config.Dir, s)
		}
		opts.Dir = s
	}
	if m, ok := o["max_output_bytes"]; ok {
		n, ok := m.(int)
		if !ok || n <= 0 {
			return nil, fmt.Errorf("max_output_bytes: must be a positive integer")
		}
		opts.MaxOutputBytes = n
	}
	return commandtool.New(opts)
}

func stringList(v any) ([]string, error) {
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("not a list")
	}
	out := make([]string, 0, len(list))
	for _, item := range list {
		s, ok := item.(string)
		if !ok {
			return nil, fmt.Errorf("not a string")
		}
		out = append(out, s)
	}
	return out, nil
}

func duration(v any) (time.Duration, error) {
	switch t := v.(type) {
	case int:
		return time.Duration(t) * time.Second, nil
	case float64:
		return time.Duration(t * float64(time.Second)), nil
	case string:
		return time.ParseDuration(t)
	}
	return 0, fmt.Errorf("must be seconds or a duration such as \"30s\"")
}
