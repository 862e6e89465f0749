module nerve.dev/nerve

go 1.19
