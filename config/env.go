package config

import "fmt"

// envRef returns the variable named by value, if value is a DeerFlow-style
// environment reference: "$" followed by at least one character. Only the
// whole value is a reference: "$HOME/x" names the variable "HOME/x",
// exactly as DeerFlow reads it.
func envRef(value string) (string, bool) {
	if len(value) < 2 || value[0] != '$' {
		return "", false
	}
	return value[1:], true
}

// missingEnvMsg is the message of a load error for a missing variable.
func missingEnvMsg(name string) string {
	return "environment variable " + name + " is not set"
}

// joinKey appends a mapping key to a key path.
func joinKey(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// indexKey appends a sequence index to a key path.
func indexKey(path string, i int) string {
	return fmt.Sprintf("%s[%d]", path, i)
}
