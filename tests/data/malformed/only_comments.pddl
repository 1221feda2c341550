; This file has nothing but comments.
;; (define (domain commented-out)
;;   (:predicates (p)))
