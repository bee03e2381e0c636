package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/memory"
)

func newMemoryExportCmd(g *globals) *cobra.Command {
	var out string
	c := &cobra.Command{
		Use:   "export",
		Short: "Write the user's memory document as JSON",
		Long: `Write the whole memory document of the --user (summaries and facts) as
JSON, in the shape of GET /api/memory/export, to stdout or, with -o, to a
file (written atomically, readable by its owner only). antler memory
import and DeerFlow's Memory page read it back.`,
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
			if out == "" || out == "-" {
				return writeJSONOut(c.OutOrStdout(), d)
			}
			var b bytes.Buffer
			if err := writeJSONOut(&b, d); err != nil {
				return err
			}
			if err := config.WriteFileAtomic(out, b.Bytes(), 0o600); err != nil {
				return fmt.Errorf("export to %s: %w", out, err)
			}
			_, err = fmt.Fprintf(c.OutOrStdout(), "Exported %s of user %q to %s\n", plural(len(d.Facts), "fact"), s.user, out)
			return err
		},
	}
	c.Flags().StringVarP(&out, "output", "o", "", "file to write (default: stdout)")
	return c
}

func newMemoryImportCmd(g *globals) *cobra.Command {
	c := &cobra.Command{
		Use:   "import FILE",
		Short: "Replace the user's memory with a JSON document",
		Long: `Replace the whole memory document of the --user with the JSON document in
FILE ("-" reads stdin), as POST /api/memory/import does: a file antler
memory export or DeerFlow's Memory page wrote. The document is checked
first; a bad one changes nothing and the error names the file and the
field (at most 1 MiB, 500 facts; facts beyond memory.max_facts are
dropped, the lowest confidence first).`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			s, err := openMemory(g)
			if err != nil {
				return err
			}
			defer s.close()
			in, err := readMemoryFile(args[0], c.InOrStdin())
			if err != nil {
				return err
			}
			d, err := s.mgr.Import(c.Context(), s.user, in)
			if errors.Is(err, memory.ErrInvalid) {
				return &config.Error{File: args[0], Msg: strings.TrimPrefix(err.Error(), memory.ErrInvalid.Error()+": ")}
			}
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(c.OutOrStdout(), "Imported %s into the memory of user %q\n", plural(len(d.Facts), "fact"), s.user)
			return err
		},
	}
	return c
}

// readMemoryFile reads and parses a memory document from path (stdin for
// "-"), bounded by memory.MaxDocumentBytes. A syntax or type error names
// the file, the line and the field.
func readMemoryFile(path string, stdin io.Reader) (*memory.Document, error) {
	var r io.Reader = stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, &config.Error{File: path, Msg: "cannot read: " + err.Error(), Err: err}
		}
		defer f.Close()
		r = f
	}
	data, err := io.ReadAll(io.LimitReader(r, memory.MaxDocumentBytes+1))
	if err != nil {
		return nil, &config.Error{File: path, Msg: "cannot read: " + err.Error(), Err: err}
	}
	if len(data) > memory.MaxDocumentBytes {
		return nil, &config.Error{File: path, Msg: fmt.Sprintf("larger than %d bytes", memory.MaxDocumentBytes)}
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, &config.Error{File: path, Msg: "empty: a memory document is a JSON object"}
	}
	d := memory.NewDocument()
	err = json.Unmarshal(data, d)
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return nil, &config.Error{File: path, Line: lineAt(data, syn.Offset), Msg: "invalid JSON: " + syn.Error(), Err: err}
	case errors.As(err, &typ) && typ.Field == "":
		return nil, &config.Error{File: path, Msg: "not a memory document: the top level must be a JSON object (as antler memory export writes)", Err: err}
	case errors.As(err, &typ):
		return nil, &config.Error{File: path, Line: lineAt(data, typ.Offset), Key: typ.Field,
			Msg: fmt.Sprintf("must be a JSON %s, not %s", jsonKind(typ.Type.Kind().String()), typ.Value), Err: err}
	case err != nil:
		return nil, &config.Error{File: path, Msg: err.Error(), Err: err}
	}
	return d, nil
}

// lineAt is the 1-based line of a byte offset of data.
func lineAt(data []byte, off int64) int {
	off = min(max(off, 0), int64(len(data)))
	return bytes.Count(data[:off], []byte("\n")) + 1
}

// jsonKind names a Go kind as the JSON type a user writes.
func jsonKind(kind string) string {
	switch kind {
	case "string":
		return "string"
	case "float64", "int", "int64":
		return "number"
	case "slice":
		return "array"
	case "struct", "map":
		return "object"
	case "bool":
		return "boolean"
	}
	return kind
}
