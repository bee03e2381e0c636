package cli

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/antlerhq/antler/gateway"
	"github.com/antlerhq/antler/store"
	"github.com/antlerhq/antler/store/postgres"
)

// openPostgres opens the Postgres store of database.backend: postgres
// (database.postgres_url, $VAR resolved at load; database.postgres_schema;
// database.pool_size) and migrates its schema.
func (a *app) openPostgres() (store.Store, error) {
	db := a.cfg.Database
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := postgres.Open(ctx, db.PostgresURL, postgres.Options{Schema: db.PostgresSchema,
		MaxConns: int32(db.PoolSize), Retention: store.Retention{KeepLatest: db.CheckpointRetention.KeepLatest}, Logger: a.logger})
	if err != nil {
		return nil, fmt.Errorf("open the Postgres thread store (database.postgres_url): %w", err)
	}
	a.store = st
	a.onClose(st.Close)
	return st, nil
}

// newGateway builds the gateway from opts. With the Postgres backend the
// process is one replica among several sharing the database: runs are
// leased per thread across replicas (database.run_lease_seconds), their
// frames relayed so that any replica can stream or cancel them, the
// extensions config kept in step with a versioned copy in the database,
// and the returned serve function serves the replica's handler. Otherwise it is
// the gateway's own Serve.
func (a *app) newGateway(opts gateway.Options) (*gateway.Server, func(context.Context, net.Listener) error, error) {
	pg, ok := opts.Store.(*postgres.Store)
	if !ok {
		gw, err := gateway.New(opts)
		if err != nil {
			return nil, nil, err
		}
		return gw, gw.Serve, nil
	}
	rep, err := gateway.NewReplica(gateway.ReplicaOptions{Store: pg,
		LeaseTTL:       time.Duration(a.cfg.Database.RunLeaseSeconds) * time.Second,
		ExtensionsPath: opts.ExtensionsPath, Logger: a.logger})
	if err != nil {
		return nil, nil, err
	}
	gw, err := gateway.New(rep.Options(opts))
	if err != nil {
		rep.Close()
		return nil, nil, err
	}
	rep.Attach(gw)
	a.onClose(rep.Close) // after the gateway stops, before the store closes
	return gw, rep.Serve, nil
}
