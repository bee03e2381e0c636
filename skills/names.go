package skills

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/antlerhq/antler/vpath"
)

var skillNamePattern = regexp.MustCompile(`^[a-z0-9]+(?:-[a-z0-9]+)*$`)

// supportDirs are the folders of a skill package that hold supporting
// files written with skill_manage write_file.
var supportDirs = []string{"assets", "references", "scripts", "templates"}

// ValidateName checks a skill name given to skill_manage and returns it
// trimmed.
func ValidateName(name string) (string, error) {
	n := strings.TrimSpace(name)
	if !skillNamePattern.MatchString(n) {
		return "", errors.New("Skill name must be hyphen-case using lowercase letters, digits, and hyphens only.")
	}
	if utf8.RuneCountInString(n) > maxNameLen {
		return "", errors.New("Skill name must be 64 characters or fewer.")
	}
	return n, nil
}

// safeUserID returns the directory name for a user id, as
// vpath.SafeUserID does (so that /mnt/skills/custom maps to the same
// folder): the id itself when it is a valid id, else "sanitized-" and 16
// hex digits of its SHA-256. The empty id is "default".
func safeUserID(id string) string {
	if id == "" {
		return "default"
	}
	return vpath.SafeUserID(id)
}

// windowsReserved are device names Windows refuses as file names.
var windowsReserved = []string{
	"CON", "PRN", "AUX", "NUL",
	"COM1", "COM2", "COM3", "COM4", "COM5", "COM6", "COM7", "COM8", "COM9",
	"LPT1", "LPT2", "LPT3", "LPT4", "LPT5", "LPT6", "LPT7", "LPT8", "LPT9",
}

// windowsIncompatible says why a path segment cannot exist on Windows, or
// returns "".
func windowsIncompatible(seg string) string {
	for _, r := range seg {
		if r < 0x20 {
			return "control character"
		}
		if strings.ContainsRune(`<>:"|?*\`, r) {
			return fmt.Sprintf("reserved character %q", r)
		}
	}
	if strings.HasSuffix(seg, ".") || strings.HasSuffix(seg, " ") {
		return "trailing dot or space"
	}
	base, _, _ := strings.Cut(seg, ".")
	if slices.Contains(windowsReserved, strings.ToUpper(base)) {
		return "reserved device name"
	}
	return ""
}

// checkSupportPath validates the path of a supporting file relative to a
// skill package and returns it cleaned. The rules and texts are
// DeerFlow's: a filename is required, the path is relative, has no ".."
// or empty segments, starts with assets/, references/, scripts/ or templates/ and names a file
// inside it. With portable set (every write; removals skip it so that an
// old file can still be deleted) each segment must also be a valid
// Windows file name.
func checkSupportPath(rel string, portable bool) (string, error) {
	if rel == "" || strings.HasSuffix(rel, "/") {
		return "", errors.New("Supporting file path must include a filename.")
	}
	if strings.HasPrefix(rel, "/") || strings.HasPrefix(rel, `\`) || (len(rel) > 1 && rel[1] == ':') {
		return "", errors.New("Supporting file path must be relative.")
	}
	parts := strings.Split(rel, "/")
	for _, p := range parts {
		if p == "" || p == ".." || p == "." {
			return "", errors.New("Supporting file path must not contain parent-directory traversal.")
		}
		if strings.ContainsRune(p, 0) {
			return "", errors.New("Supporting file path must not contain NUL bytes.")
		}
	}
	if portable {
		for _, p := range parts {
			if reason := windowsIncompatible(p); reason != "" {
				return "", fmt.Errorf("Supporting file path is not portable to Windows: '%s' (%s)", rel, reason)
			}
		}
	}
	if !slices.Contains(supportDirs, parts[0]) {
		return "", fmt.Errorf("Supporting files must live under one of: %s.", strings.Join(supportDirs, ", "))
	}
	if len(parts) < 2 {
		return "", fmt.Errorf("Supporting file path must name a file inside '%s/'.", parts[0])
	}
	return path.Clean(rel), nil
}
