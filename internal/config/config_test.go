package config_test

import (
	"net/netip"
	"slices"
	"strings"
	"testing"

	"creativeapi/internal/config"
	"creativeapi/internal/tron"
)

func load(vars map[string]string) (config.Config, error) {
	return config.Load(func(k string) string { return vars[k] })
}

func TestTheDefaultsAreProductionOnes(t *testing.T) {
	t.Parallel()
	c, err := load(nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.DevMode || !c.CookieSecure || c.TreasuryAddress != "" || len(c.TrustedProxies) != 0 || len(c.AllowedOrigins) != 0 {
		t.Fatalf("defaults: %+v", c)
	}
}

func TestTheDevelopmentTreasuryNeedsDevMode(t *testing.T) {
	t.Parallel()
	if _, err := load(map[string]string{"TREASURY_ADDRESS": tron.DevTreasuryAddress}); err == nil ||
		!strings.Contains(err.Error(), "is the development treasury") {
		t.Fatalf("without DEV_MODE: %v", err)
	}
	if _, err := load(map[string]string{"TREASURY_ADDRESS": tron.DevTreasuryAddress, "DEV_MODE": "true"}); err != nil {
		t.Fatalf("with DEV_MODE: %v", err)
	}
	if _, err := load(map[string]string{"DEV_MODE": "maybe"}); err == nil || !strings.Contains(err.Error(), `DEV_MODE="maybe": want true or false`) {
		t.Fatalf("a bad DEV_MODE: %v", err)
	}
}

func TestTrustedProxiesAreNetworks(t *testing.T) {
	t.Parallel()
	c, err := load(map[string]string{"TRUSTED_PROXIES": " 10.0.0.0/8, 192.168.1.7 ,fd00::/8, ::ffff:172.16.0.0/108, 10.1.2.3/8"})
	if err != nil {
		t.Fatal(err)
	}
	want := []netip.Prefix{
		netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("192.168.1.7/32"), netip.MustParsePrefix("fd00::/8"),
		netip.MustParsePrefix("172.16.0.0/12"), netip.MustParsePrefix("10.0.0.0/8"),
	}
	if !slices.Equal(c.TrustedProxies, want) {
		t.Fatalf("got %v, want %v", c.TrustedProxies, want)
	}
	_, err = load(map[string]string{"TRUSTED_PROXIES": "10.0.0.0/33,proxy.internal"})
	if err == nil || !strings.Contains(err.Error(), `"10.0.0.0/33" is not a CIDR`) || !strings.Contains(err.Error(), `"proxy.internal" is neither a CIDR`) {
		t.Fatalf("bad entries: %v", err)
	}
}
