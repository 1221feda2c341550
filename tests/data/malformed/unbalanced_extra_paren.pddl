; An extra ')' after the pickup action closes (define ...) early.
(define (domain bw)
  (:predicates (clear ?x) (holding ?x))
  (:action pickup
    :parameters (?x)
    :precondition (clear ?x)
    :effect (and (holding ?x) (not (clear ?x)))))
  (:action putdown
    :parameters (?x)
    :precondition (holding ?x)
    :effect (and (clear ?x) (not (holding ?x)))))
