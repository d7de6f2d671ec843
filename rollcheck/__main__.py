from rollcheck.cli import main

raise SystemExit(main())
