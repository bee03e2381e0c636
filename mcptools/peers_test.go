package mcptools_test

func stopPeers() {}
