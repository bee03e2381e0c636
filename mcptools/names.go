package mcptools

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strings"

	"github.com/antlerhq/antler/config"
)

// maxNameLen is the longest tool name model APIs accept.
const maxNameLen = 64

var validName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// ValidName reports whether name can be sent to a model as a function name.
func ValidName(name string) bool { return validName.MatchString(name) }

// ToolName returns the model-facing name of the tool raw of server: raw
// itself when prefix is false, "<server>_<raw>" otherwise, sanitised when
// the result is not a valid name. The second result reports whether the
// name had to be sanitised.
//
// Sanitising is deterministic and depends only on its inputs: every run of
// characters outside [A-Za-z0-9_-] becomes one "_" (none at the start, after
// a "_" or "-", or at the end), an empty result becomes "tool", and a
// name longer than 64 characters is cut to 55 characters plus "_" and 8 hex
// digits of the SHA-256 of the unsanitised name.
func ToolName(server, raw string, prefix bool) (string, bool) {
	full := raw
	if prefix {
		full = server + "_" + raw
	}
	if ValidName(full) {
		return full, false
	}
	return sanitize(full), true
}

func sanitize(full string) string {
	var b strings.Builder
	for _, r := range full {
		if r < 128 && isNameByte(byte(r)) {
			b.WriteRune(r)
			continue
		}
		// A run of invalid characters becomes one "_", and none at the
		// start or right after a separator.
		if s := b.String(); s != "" && s[len(s)-1] != '_' && s[len(s)-1] != '-' {
			b.WriteByte('_')
		}
	}
	s := b.String()
	// Drop the separator that stands for removed characters at the end,
	// so "a b " becomes "a_b" while a name's own trailing "_" is kept.
	if len(full) > 0 && !isNameByte(full[len(full)-1]) {
		s = strings.TrimSuffix(s, "_")
	}
	if s == "" {
		s = "tool"
	}
	if len(s) > maxNameLen {
		s = s[:maxNameLen-9] + "_" + shortHash(full, 8)
	}
	return s
}

func isNameByte(c byte) bool {
	return c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func shortHash(s string, n int) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])[:n]
}

// withSuffix returns name made unique by a hash of key: name is cut so that
// "_" and n hex digits fit in 64 characters; n must be less than 63.
func withSuffix(name, key string, n int) string {
	suffix := "_" + shortHash(key, n)
	if len(name)+len(suffix) > maxNameLen {
		name = name[:maxNameLen-len(suffix)]
	}
	return name + suffix
}

// stemCut is how much of a server's name prefix survives in every tool
// name of the server: a sanitised name is cut to 55 characters, and a
// collision suffix of up to 16 hex digits (see buildLocked) cuts it to 47.
const stemCut = maxNameLen - 17

// couldName reports whether server s could expose a tool under name: with
// tool_name_prefix false any name is possible; otherwise the name begins
// with the server's prefix "<server>_" as sanitisation leaves it (it
// rewrites names from left to right, so the prefix of a name depends on
// the server's name alone), cut to stemCut.
func couldName(s config.MCPServer, name string) bool {
	if !s.ToolNamePrefix {
		return true
	}
	stem, _ := ToolName(s.Name, "", true)
	return strings.HasPrefix(name, stem[:min(len(stem), stemCut)])
}
