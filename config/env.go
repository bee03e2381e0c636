package config

import "fmt"

// ExpandEnv resolves a DeerFlow-style environment reference. A value that
// starts with "$" followed by at least one character names an environment
// variable and is replaced by its value; any other value is returned
// unchanged. Only the whole value is a reference: "$HOME/x" names the
// variable "HOME/x", exactly as DeerFlow reads it.
//
// A missing variable returns an error wrapping [ErrEnvNotSet].
func ExpandEnv(value string, lookupEnv func(string) (string, bool)) (string, error) {
	name, ok := envRef(value)
	if !ok {
		return value, nil
	}
	if lookupEnv != nil {
		if v, found := lookupEnv(name); found {
			return v, nil
		}
	}
	return "", fmt.Errorf("environment variable %s is not set: %w", name, ErrEnvNotSet)
}

// envRef returns the variable named by value, if value is a reference.
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
