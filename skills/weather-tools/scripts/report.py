"""Print a small weather report for a city from a built-in table (no network)."""

import sys

TABLE = {
    "Paris": (21, "Sunny"),
    "Beijing": (22, "Partly Cloudy"),
    "New York": (18, "Rain"),
}


def main() -> int:
    if len(sys.argv) != 2:
        print("usage: report.py CITY", file=sys.stderr)
        return 2
    city = sys.argv[1]
    if city not in TABLE:
        print(f"unknown city: {city}", file=sys.stderr)
        return 1
    temperature, condition = TABLE[city]
    print(f"Weather report for {city}")
    print(f"temperature: {temperature}")
    print(f"condition: {condition}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
