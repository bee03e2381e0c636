package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/antlerhq/antler/store"
	"github.com/antlerhq/antler/store/postgres"
)

// Open a store (migrating its schema) and lease a thread for a run: the
// lease is what keeps a second replica from running the same thread.
func Example() {
	ctx := context.Background()
	st, err := postgres.Open(ctx, "postgres://postgres@127.0.0.1:5432/test", postgres.Options{Schema: "antler"})
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	leases := postgres.NewLeases(st, postgres.LeaseOptions{}) // 30 s TTL, heartbeat and sweeper started
	defer leases.Close()

	if err := st.CreateThread(ctx, &store.Thread{ID: "t1", UserID: "alice"}); err != nil && !errors.Is(err, store.ErrExists) {
		log.Fatal(err)
	}
	release, err := leases.Acquire(ctx, "t1", "run-1")
	if errors.Is(err, postgres.ErrLeaseHeld) {
		fmt.Println("another replica is running t1")
		return
	}
	if err != nil {
		log.Fatal(err)
	}
	defer release()
	// ... run the agent; its checkpoints go to st ...
}
