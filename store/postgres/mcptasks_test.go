package postgres_test

import (
	"testing"

	"github.com/antlerhq/antler/store/storetest"
)

func TestMCPTasksConformance(t *testing.T) {
	storetest.RunMCPTasks(t, func(t *testing.T) storetest.TaskStore { return open(t) })
}
