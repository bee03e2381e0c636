package postgres_test

import (
	"testing"

	"github.com/antlerhq/antler/store"
	"github.com/antlerhq/antler/store/storetest"
)

func TestScheduledTasksConformance(t *testing.T) {
	storetest.RunScheduledTasks(t, func(t *testing.T) store.ScheduledTasks { return open(t) })
}
