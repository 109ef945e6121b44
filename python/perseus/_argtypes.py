"""argparse types shared by perseus's Python commands (perseus.launch,
perseus.gpu_check): a value argparse accepts is one the command can use, so
NaN, infinity, zero or a negative number is a usage error naming the flag
(argparse prints it and exits 2) instead of a busy loop, a wait without end
or a traceback later."""
import argparse
import math


def seconds(minimum=0.0, inclusive=False):
    """A finite number of seconds above `minimum` (or equal to it, if inclusive)."""
    bound = ">= %g" % minimum if inclusive else "> %g" % minimum

    def parse(text):
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not math.isfinite(value) or value < minimum or (value == minimum and not inclusive):
            raise argparse.ArgumentTypeError("expected a finite number %s, got %r" % (bound, text))
        return value
    parse.__name__ = "seconds"
    return parse


def integer(minimum):
    """An integer >= `minimum`."""
    def parse(text):
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or value < minimum:
            raise argparse.ArgumentTypeError("expected an integer >= %d, got %r" % (minimum, text))
        return value
    parse.__name__ = "integer"
    return parse


def integer_list(minimum):
    """A comma-separated list of integers >= `minimum` ("2,2,2,3")."""
    one = integer(minimum)

    def parse(text):
        try:
            return [one(part) for part in text.split(",")]
        except argparse.ArgumentTypeError:
            raise argparse.ArgumentTypeError(
                "expected a comma-separated list of integers >= %d, got %r" % (minimum, text)) from None
    parse.__name__ = "list"
    return parse
