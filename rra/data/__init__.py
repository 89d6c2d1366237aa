from rra.data.records import QAExample

__all__ = ["QAExample"]
