"""studies.advise"""
