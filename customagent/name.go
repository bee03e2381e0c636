package customagent

import (
	"fmt"
	"regexp"
	"strings"
)

// namePattern is DeerFlow's rule for agent names.
const namePattern = `^[A-Za-z0-9-]+$`

var nameRE = regexp.MustCompile(namePattern)

// NameError is an agent name that does not match DeerFlow's pattern
// ^[A-Za-z0-9-]+$ (letters, digits and hyphens). Its
// message is DeerFlow's text.
type NameError struct{ Name string }

func (e *NameError) Error() string {
	return fmt.Sprintf("Invalid agent name '%s'. Must match pattern: %s", e.Name, namePattern)
}

// ValidateName returns a *[NameError] unless name matches ^[A-Za-z0-9-]+$.
// Such a name is one path segment that can never be "." or "..".
func ValidateName(name string) error {
	if !nameRE.MatchString(name) {
		return &NameError{Name: name}
	}
	return nil
}

// dirName is the folder name of an agent: its name in lower case, as in
// DeerFlow, so "Reviewer" and "reviewer" are the same agent.
func dirName(name string) string { return strings.ToLower(name) }
