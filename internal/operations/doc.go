// Package operations holds the tests of what operators get: the binary's
// metrics as a real Prometheus scrapes them, the alert rules and the
// Grafana dashboard of ops/ (evaluated by that Prometheus), and promtool's
// checks of the exposition and the rules.
package operations
