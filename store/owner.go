package store

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
)

// NewOwnerID returns a name for this process to write in lease and claim
// rows ("host:pid:random"), unique across replicas and restarts: the
// Postgres leases, the scheduled-task dispatcher and the MCP task runtime
// use it when their options name no owner.
func NewOwnerID() string {
	host, _ := os.Hostname()
	var b [6]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s:%d:%s", cmp.Or(host, "replica"), os.Getpid(), hex.EncodeToString(b[:]))
}
