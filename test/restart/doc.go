// Package restart holds the crash tests of `antler serve` on its default
// SQLite store: the test binary re-executes itself as `antler serve`,
// kills it with SIGKILL while runs stream, restarts it on the same home
// and checks what the restarted server reports.
package restart
