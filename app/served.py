"""The page as `ttr app` serves it: Streamlit's ASGI app with the table's secret in front
(`app.launch.TableSecret`). Run by `ttr app` (`streamlit run app/served.py`, which finds `app`
below), with the secret in the environment."""
from __future__ import annotations

import os
import sys

import streamlit as st
from starlette.middleware import Middleware

from app.launch import PAGE, SECRET_ENV, TableSecret

if not os.environ.get(SECRET_ENV):
    sys.exit("ttr: error: serve the table's page with `ttr app` (it makes the secret the phones need)")

app = st.App(PAGE, middleware=[Middleware(TableSecret, secret=os.environ[SECRET_ENV])])
