package sandbox

import (
	"context"
	_ "embed"
	"errors"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/antlerhq/antler/tool"
	"github.com/antlerhq/antler/vpath"
)

//go:embed ls.md
var lsDoc string

const lsSchema = `{
  "type": "object",
  "properties": {
    "description": {"type": "string", "description": "Why you are listing this directory, in a few words. Always give this argument first."},
    "path": {"type": "string", "description": "The absolute path of the directory to list."}
  },
  "required": ["description", "path"]
}`

type lsArgs struct {
	Description string `json:"description"`
	Path        string `json:"path"`
}

// lsDepth is how deep ls lists.
const lsDepth = 2

// Ls returns the ls tool.
func (t *Tools) Ls() *tool.Tool { return newTool(NameLs, lsDoc, lsSchema, t.ls) }

func (t *Tools) ls(ctx context.Context, call *tool.Call, in lsArgs) (*tool.Result, error) {
	sb, res, err := t.sandbox(ctx, call)
	if res != nil || err != nil {
		return res, err
	}
	if r := t.skillBlocked(sb, in.Path); r != nil {
		return r, nil
	}
	target, err := sb.Resolve(in.Path, vpath.Read)
	if err != nil {
		// /mnt/skills is a folder of roots; list them. (The bare
		// /mnt/user-data stays refused, as in DeerFlow.)
		if errors.Is(err, vpath.ErrNotAllowed) && path.Clean(strings.ReplaceAll(in.Path, "\\", "/")) == sb.layout.SkillsContainerPath() {
			if kids := sb.layout.ChildRoots(sb.user, sb.thread, in.Path); len(kids) > 0 {
				return t.lsFormat(sb, t.listChildRoots(sb, kids)), nil
			}
		}
		return pathError(err), nil
	}
	entries, err := t.listDir(sb, target, lsDepth)
	switch classify(err) {
	case classOther:
		if err != nil {
			return tool.Errorf("Unexpected error listing directory: %s", unexpected(sb, err)), nil
		}
	case classNotExist:
		return tool.Errorf("Directory not found: %s", in.Path), nil
	case classPermission:
		return tool.Errorf("Permission denied: %s", in.Path), nil
	case classNotDir, classIsDir:
		return tool.Errorf("Path is not a directory: %s", in.Path), nil
	case classEscape:
		return tool.Errorf("%s", vpath.TraversalMessage), nil
	}
	return t.lsFormat(sb, entries), nil
}

func (t *Tools) lsFormat(sb *Sandbox, entries []string) *tool.Result {
	slices.Sort(entries)
	if len(entries) == 0 {
		return tool.Text("(empty)")
	}
	return tool.Text(truncateHead(sb.Mask(strings.Join(entries, "\n")), t.cfg.Sandbox.LsOutputMaxChars, lsHint))
}

// listDir lists target up to depth levels as virtual paths, directories
// with a trailing slash. Symlinks are listed (not followed) when their
// target stays in the jail; ignored names are skipped.
func (t *Tools) listDir(sb *Sandbox, target vpath.Target, depth int) ([]string, error) {
	r, err := openJail(target)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	fi, err := r.Stat(target.Rel)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, errNotDir
	}
	var out []string
	fsys := r.FS()
	var walk func(rel, virtual string, level int)
	walk = func(rel, virtual string, level int) {
		ents, err := fs.ReadDir(fsys, rel)
		if err != nil {
			return // unreadable folders are skipped, as DeerFlow does
		}
		for _, e := range ents {
			name := e.Name()
			if ignoredName(name) {
				continue
			}
			childRel := path.Join(rel, name)
			childVirtual := virtual + "/" + name
			if t.hiddenBySkill(sb, childVirtual) {
				continue
			}
			isDir := e.IsDir()
			if e.Type()&fs.ModeSymlink != 0 {
				st, err := r.Stat(childRel) // refuses a target outside the jail
				if err != nil {
					continue
				}
				isDir = st.IsDir()
				out = append(out, withSlash(childVirtual, isDir))
				continue
			}
			out = append(out, withSlash(childVirtual, isDir))
			if isDir && level < depth {
				walk(childRel, childVirtual, level+1)
			}
		}
	}
	walk(target.Rel, strings.TrimSuffix(target.Virtual, "/"), 1)
	return out, nil
}

// listChildRoots lists virtual folders such as /mnt/skills whose children
// are roots: each existing root, and its direct entries.
func (t *Tools) listChildRoots(sb *Sandbox, kids []vpath.Root) []string {
	var out []string
	for _, k := range kids {
		if fi, err := os.Stat(k.Host); err != nil || !fi.IsDir() {
			continue
		}
		out = append(out, k.Virtual+"/")
		target, err := sb.Resolve(k.Virtual, vpath.Read)
		if err != nil {
			continue
		}
		sub, _ := t.listDir(sb, target, 1)
		out = append(out, sub...)
	}
	return out
}

func withSlash(p string, dir bool) string {
	if dir {
		return p + "/"
	}
	return p
}
