"""Imported by the crash suite's fork server: warms the workload up once (see warm_up)."""

import workload

workload.warm_up()
