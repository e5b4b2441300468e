package main

import (
	"context"
	"errors"
)

func cmdUsers(ctx context.Context, e env, args []string) error {
	return errors.New("users: not implemented yet")
}

func cmdOrgs(ctx context.Context, e env, args []string) error {
	return errors.New("orgs: not implemented yet")
}
