package email_test

import (
	"testing"

	"creativeapi/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }
