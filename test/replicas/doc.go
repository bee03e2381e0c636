// Package replicas holds the multi-replica tests of the gateway: two
// gateways (in-process servers, and `antler serve` processes) share one
// PostgreSQL database and must behave as one service. The tests need
// ANTLER_TEST_POSTGRES_URL and are skipped without it.
package replicas
