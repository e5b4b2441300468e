// Package e2e holds the tests that drive the real server from outside Go:
// the TypeScript client's integration test under node (directly and through
// Prism's validating proxy) and the /docs page in headless Chromium. The
// package has no code of its own; its tests start the servers and the tools.
package e2e
