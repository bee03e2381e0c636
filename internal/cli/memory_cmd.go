package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/memory"
)

// The `antler memory` commands read and change the --user's memory
// document under the home, as the /api/memory routes do for a gateway
// caller. They need config.yaml (the memory section's storage_path and
// limits) but build no model, tool or MCP server. A running `antler
// serve` writes the same file: the last write of a read-modify-write wins.

func newMemoryCmd(g *globals) *cobra.Command {
	c := &cobra.Command{
		Use:   "memory",
		Short: "List, show, forget, export and import the user's long-term memory",
		Long: `Manage the long-term memory of the --user (default "default"): the facts
extracted from conversations (or added by the model in memory mode tool)
and the summaries of the user and their history, stored in
{home}/users/{user}/memory.json (the memory section's
backend_config.storage_path). The document is the one the /api/memory
routes and DeerFlow's Memory page show. Every change rewrites the file
atomically.`,
		Args: groupArgs,
		RunE: func(c *cobra.Command, _ []string) error { return c.Help() },
	}
	c.AddCommand(newMemoryListCmd(g), newMemoryShowCmd(g), newMemoryForgetCmd(g),
		newMemoryExportCmd(g), newMemoryImportCmd(g))
	return c
}

// memoryStore is the --user's memory for one command.
type memoryStore struct {
	mgr  *memory.Manager
	user string
	cfg  *config.Config
}

// openMemory loads config.yaml (and the .env beside it) and builds a
// memory manager without an extraction model. The memory section need
// not be on: a document written while it was stays readable.
func openMemory(g *globals) (*memoryStore, error) {
	if err := validateID("user", g.user); err != nil {
		return nil, err
	}
	paths, err := config.ResolvePaths(g.config, g.extensions, g.home, g.opts.Getenv)
	if err != nil {
		return nil, err
	}
	if _, err := config.ApplyDotEnv(filepath.Dir(paths.Config), os.LookupEnv, os.Setenv); err != nil {
		return nil, err
	}
	if paths, err = config.ResolvePaths(paths.Config, g.extensions, g.home, g.opts.Getenv); err != nil {
		return nil, err
	}
	cfg, err := loadConfig(paths.Config)
	if err != nil {
		return nil, err
	}
	if cfg.Memory.ManagerClass == "noop" {
		return nil, &config.Error{File: cfg.Path, Key: "memory.manager_class", Msg: "noop keeps no memory document"}
	}
	home := paths.Home
	if abs, err := filepath.Abs(home); err == nil {
		home = abs
	}
	logger, err := newLogger(g.opts.Stderr, g.logLevel, g.logFormat, false, g.opts.Getenv)
	if err != nil {
		return nil, err
	}
	mgr, err := memory.New(memory.Options{Config: cfg.Memory, Home: home, Logger: logger})
	if err != nil {
		return nil, &config.Error{File: cfg.Path, Key: "memory", Msg: err.Error(), Err: err}
	}
	return &memoryStore{mgr: mgr, user: g.user, cfg: cfg}, nil
}

// close ends the manager (it has no extraction queue to drain).
func (s *memoryStore) close() { _ = s.mgr.Close(context.Background()) }

// fact returns the fact id of the user's document, or a usage error
// listing how to find the ids.
func (s *memoryStore) fact(ctx context.Context, id string) (memory.Fact, error) {
	d, err := s.mgr.Get(ctx, s.user)
	if err != nil {
		return memory.Fact{}, err
	}
	for _, f := range d.Facts {
		if f.ID == id {
			return f, nil
		}
	}
	return memory.Fact{}, noFactError(s.user, id, len(d.Facts))
}

// noFactError is the usage error of an unknown fact id.
func noFactError(user, id string, n int) error {
	if n == 0 {
		return usageErrorf("user %q has no memory fact %q: the memory has no facts", user, id)
	}
	return usageErrorf("user %q has no memory fact %q (antler memory list shows its %s)", user, id, plural(n, "fact"))
}

// writeJSONOut writes v as indented JSON with a final newline.
func writeJSONOut(w io.Writer, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(data, '\n'))
	return err
}

func newMemoryListCmd(g *globals) *cobra.Command {
	var (
		asJSON bool
		wf     widthFlag
	)
	c := &cobra.Command{
		Use:   "list",
		Short: "List the user's memory facts",
		Long: `List the memory facts of the --user, one row each: id, category,
confidence, creation date and content (cut to the width). --json prints
the facts as the /api/memory document holds them.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			s, err := openMemory(g)
			if err != nil {
				return err
			}
			defer s.close()
			d, err := s.mgr.Get(c.Context(), s.user)
			if err != nil {
				return err
			}
			w := c.OutOrStdout()
			if asJSON {
				return writeJSONOut(w, d.Facts)
			}
			if len(d.Facts) == 0 {
				_, err := fmt.Fprintf(w, "No memory facts for user %q\n", s.user)
				return err
			}
			t := &table{header: []string{"ID", "CATEGORY", "CONFIDENCE", "CREATED", "CONTENT"}, flex: 4}
			for _, f := range d.Facts {
				t.add(f.ID, f.Category, strconv.FormatFloat(f.Confidence, 'f', 2, 64), dateOf(f.CreatedAt), oneLineText(f.Content))
			}
			return t.write(w, wf.width(w, g.opts.Getenv))
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print the facts as JSON")
	wf.register(c.Flags())
	return c
}

// dateOf is the date part of a document timestamp.
func dateOf(stamp string) string {
	if d, _, ok := strings.Cut(stamp, "T"); ok {
		return d
	}
	return stamp
}

// oneLineText puts a multi-line text on one line for a table cell.
func oneLineText(s string) string { return strings.Join(strings.Fields(s), " ") }

func newMemoryShowCmd(g *globals) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "show ID",
		Short: "Show one memory fact",
		Long: `Show one memory fact of the --user in full: its content, category,
confidence, where it came from (the thread, "manual", "tool" or
"import") and when it was created and last edited.`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			s, err := openMemory(g)
			if err != nil {
				return err
			}
			defer s.close()
			f, err := s.fact(c.Context(), args[0])
			if err != nil {
				return err
			}
			w := c.OutOrStdout()
			if asJSON {
				return writeJSONOut(w, f)
			}
			rows := [][2]string{{"ID", f.ID}, {"Category", f.Category},
				{"Confidence", strconv.FormatFloat(f.Confidence, 'f', 2, 64)}, {"Source", f.Source},
				{"Created", f.CreatedAt}, {"Updated", f.UpdatedAt}, {"Avoid", f.SourceError}}
			for _, r := range rows {
				if r[1] != "" {
					if _, err := fmt.Fprintf(w, "%-11s %s\n", r[0]+":", r[1]); err != nil {
						return err
					}
				}
			}
			_, err = fmt.Fprintf(w, "\n%s\n", f.Content)
			return err
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print the fact as JSON")
	return c
}

func newMemoryForgetCmd(g *globals) *cobra.Command {
	var all, yes bool
	c := &cobra.Command{
		Use:   "forget ID | --all --yes",
		Short: "Delete one memory fact, or the whole memory",
		Long: `Delete one memory fact of the --user by its id (antler memory list shows
them). --all clears the whole document, every fact and summary, as
DELETE /api/memory does; it needs --yes, there is no undo (antler memory
export keeps a copy).`,
		Args: func(c *cobra.Command, args []string) error {
			switch {
			case all && len(args) > 0:
				return usageErrorf("give a fact id or --all, not both")
			case !all && len(args) != 1:
				return usageErrorf("give the id of the fact to forget (or --all --yes for every fact)")
			case all && !yes:
				return usageErrorf("--all deletes the whole memory of user %q, every fact and summary: add --yes to confirm", g.user)
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			s, err := openMemory(g)
			if err != nil {
				return err
			}
			defer s.close()
			w := c.OutOrStdout()
			if all {
				d, err := s.mgr.Get(c.Context(), s.user)
				if err != nil {
					return err
				}
				if _, err := s.mgr.Clear(c.Context(), s.user); err != nil {
					return err
				}
				_, err = fmt.Fprintf(w, "Forgot the whole memory of user %q (%s)\n", s.user, plural(len(d.Facts), "fact"))
				return err
			}
			f, err := s.fact(c.Context(), args[0])
			if err != nil {
				return err
			}
			if _, err := s.mgr.DeleteFact(c.Context(), s.user, f.ID); err != nil {
				if errors.Is(err, memory.ErrNotFound) {
					return noFactError(s.user, f.ID, 0)
				}
				return err
			}
			_, err = fmt.Fprintf(w, "Forgot %s: %s\n", f.ID, oneLineText(f.Content))
			return err
		},
	}
	c.Flags().BoolVar(&all, "all", false, "delete every fact and summary of the user")
	c.Flags().BoolVar(&yes, "yes", false, "confirm --all")
	return c
}
