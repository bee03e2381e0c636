package sandbox

import (
	"path"
	"strings"
)

// ignoredNames are names ls, glob and grep skip (and do not descend into),
// DeerFlow's list: version control, dependency and build folders, editor
// and OS clutter, logs, caches.
var ignoredNames = map[string]bool{
	".git": true, ".svn": true, ".hg": true, ".bzr": true,
	"node_modules": true, "__pycache__": true, ".venv": true, "venv": true, ".env": true, "env": true,
	".tox": true, ".nox": true, ".eggs": true, "site-packages": true,
	"dist": true, "build": true, ".next": true, ".nuxt": true, ".output": true, ".turbo": true,
	"target": true, "out": true,
	".idea": true, ".vscode": true, ".project": true, ".classpath": true, ".settings": true,
	".DS_Store": true, "Thumbs.db": true, "desktop.ini": true,
	".cache": true, "logs": true, ".coverage": true, "coverage": true, ".nyc_output": true, "htmlcov": true,
	".pytest_cache": true, ".mypy_cache": true, ".ruff_cache": true,
}

// ignoredPatterns are the wildcard entries of the list.
var ignoredPatterns = []string{
	"*.egg-info", "*.swp", "*.swo", "*~", "*.lnk", "*.log", "*.tmp", "*.temp", ".upload-*.part", "*.bak", "*.cache",
}

// ignoredName reports whether a file or folder name is on the ignore list.
func ignoredName(name string) bool {
	if ignoredNames[name] {
		return true
	}
	for _, p := range ignoredPatterns {
		if ok, _ := path.Match(p, name); ok {
			return true
		}
	}
	return false
}

// pathMatches matches rel (slash-separated, relative to the search root)
// against a glob pattern as DeerFlow does: a pattern without "/" matches
// the base name at any depth ("*.py"); any other pattern is anchored at
// the root, each part matching one segment with path.Match syntax, and
// "**" matching zero or more whole segments ("src/**/*.py" includes
// "src/top.py").
func pathMatches(pattern, rel string) bool {
	pattern = strings.Trim(strings.ReplaceAll(pattern, "\\", "/"), "/")
	if !strings.Contains(pattern, "/") {
		ok, _ := path.Match(pattern, path.Base(rel))
		return ok
	}
	return matchSegments(strings.Split(pattern, "/"), strings.Split(rel, "/"))
}

// matchSegments reports whether the segments of a path match the
// segments of a pattern, tracking the set of reachable path positions.
func matchSegments(pat, segs []string) bool {
	reach := make([]bool, len(segs)+1)
	next := make([]bool, len(segs)+1)
	reach[0] = true
	for _, p := range pat {
		clear(next)
		any := false
		if p == "**" {
			first := -1
			for i, ok := range reach {
				if ok {
					first = i
					break
				}
			}
			if first >= 0 {
				for i := first; i <= len(segs); i++ {
					next[i] = true
				}
				any = true
			}
		} else {
			for i := 0; i < len(segs); i++ {
				if reach[i] {
					if ok, _ := path.Match(p, segs[i]); ok {
						next[i+1] = true
						any = true
					}
				}
			}
		}
		if !any {
			return false
		}
		reach, next = next, reach
	}
	return reach[len(segs)]
}
