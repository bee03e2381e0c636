package sandbox

import (
	"cmp"
	"maps"
	"regexp"
	"slices"
	"strings"
)

// secretNameParts mark an environment variable as a credential when its
// upper-cased name contains one of them.
var secretNameParts = []string{"KEY", "SECRET", "TOKEN", "PASS", "CREDENTIAL", "DSN"}

// secretNames are credentials whose names carry none of secretNameParts.
var secretNames = map[string]bool{
	"DATABASE_URL": true, "DATABASE_URI": true, "REDIS_URL": true, "MONGODB_URI": true, "MONGO_URL": true,
	"AMQP_URL": true, "RABBITMQ_URL": true, "POSTGRES_URL": true, "POSTGRESQL_URL": true, "MYSQL_URL": true,
	"CLICKHOUSE_URL": true, "CONNECTION_STRING": true, "CONN_STR": true, "GH_PAT": true, "GITHUB_PAT": true,
	"MYSQL_PWD": true, "REDISCLI_AUTH": true, "REDIS_AUTH": true, "PGSERVICEFILE": true,
}

// isSecretEnvName reports whether an inherited environment variable looks
// like a credential and must not reach a sandbox command.
func isSecretEnvName(name string) bool {
	upper := strings.ToUpper(name)
	if secretNames[upper] {
		return true
	}
	for _, p := range secretNameParts {
		if strings.Contains(upper, p) {
			return true
		}
	}
	return false
}

var envKeyPattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// validEnvKey reports whether key is a POSIX environment variable name.
func validEnvKey(key string) bool { return envKeyPattern.MatchString(key) }

// sandboxEnv returns the environment of a sandbox command: environ (as
// os.Environ returns it) without secret-looking names, then injected on
// top. An injected name wins even when it looks secret: injection is
// authorised upstream.
func sandboxEnv(environ []string, injected map[string]string) []string {
	out := make([]string, 0, len(environ)+len(injected))
	for _, kv := range environ {
		k, _, ok := strings.Cut(kv, "=")
		if !ok || isSecretEnvName(k) {
			continue
		}
		if _, over := injected[k]; over {
			continue
		}
		out = append(out, kv)
	}
	for _, k := range slices.Sorted(maps.Keys(injected)) {
		out = append(out, k+"="+injected[k])
	}
	return out
}

// minRedactLen is the shortest injected value that is redacted from
// output; shorter ones would shred unrelated text (exit codes, sizes).
const minRedactLen = 8

// redacted replaces an injected secret value in output.
const redacted = "[redacted]"

// redactSecrets replaces every injected value of at least 8 characters in
// output by "[redacted]", longest first so that a value contained in
// another is not half revealed.
func redactSecrets(output string, injected map[string]string) string {
	var vals []string
	for _, v := range injected {
		if len([]rune(v)) >= minRedactLen {
			vals = append(vals, v)
		}
	}
	slices.SortFunc(vals, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	for _, v := range vals {
		output = strings.ReplaceAll(output, v, redacted)
	}
	return output
}
