package acptools

import (
	"maps"
	"runtime"
	"slices"
	"strings"
)

// inheritedVars are the host variables every agent receives, as the ACP
// and MCP stdio clients do: enough to find programs and a home directory,
// nothing that looks like a credential.
func inheritedVars() []string {
	if runtime.GOOS == "windows" {
		return []string{"APPDATA", "HOMEDRIVE", "HOMEPATH", "LOCALAPPDATA", "PATH", "PATHEXT",
			"PROCESSOR_ARCHITECTURE", "SYSTEMDRIVE", "SYSTEMROOT", "TEMP", "USERNAME", "USERPROFILE"}
	}
	return []string{"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"}
}

// childEnv is the agent's environment: the inherited variables present in
// host (shell functions skipped), overlaid with the configured env. The
// configured values were resolved by package config ($VAR read from the
// host environment, a missing variable becoming ""). The result is sorted
// by name.
func childEnv(host []string, configured map[string]string) []string {
	hostVars := map[string]string{}
	for _, kv := range host {
		k, v, ok := strings.Cut(kv, "=")
		if ok {
			hostVars[k] = v
		}
	}
	env := map[string]string{}
	for _, k := range inheritedVars() {
		if v, ok := hostVars[k]; ok && !strings.HasPrefix(v, "()") {
			env[k] = v
		}
	}
	maps.Copy(env, configured)
	out := make([]string, 0, len(env))
	for _, k := range slices.Sorted(maps.Keys(env)) {
		out = append(out, k+"="+env[k])
	}
	return out
}
